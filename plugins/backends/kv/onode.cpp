#include "kv/onode.h"

#include "kvdb/key_encoding.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::kv {

namespace {
constexpr char kOnodeFormat = 1;
}

std::string encode_onode(const Onode &o) {
  std::string out(1, kOnodeFormat);
  kvdb::keys::append_u64(out, o.size);
  return out;
}

Onode decode_onode(std::string_view bytes, std::string_view what) {
  Onode o;
  std::string_view in = bytes;
  if (in.empty() || in[0] != kOnodeFormat)
    throw sdk::Error(EUCLEAN, "onode of " + std::string(what) + " has an unknown format");
  in.remove_prefix(1);
  if (!kvdb::keys::next_u64(in, o.size))
    throw sdk::Error(EUCLEAN, "onode of " + std::string(what) + " is truncated");
  return o;
}

std::string encode_u64(uint64_t v) {
  std::string out;
  kvdb::keys::append_u64(out, v);
  return out;
}

uint64_t decode_u64(std::string_view bytes, std::string_view what) {
  uint64_t v = 0;
  if (bytes.size() != 8 || !kvdb::keys::next_u64(bytes, v))
    throw sdk::Error(EUCLEAN, std::string(what) + ": expected an 8-byte integer");
  return v;
}

}  // namespace strata::kv
