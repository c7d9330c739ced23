#include "kv/key_layout.h"

#include "kvdb/key_encoding.h"

namespace strata::kv {

namespace keys = kvdb::keys;

std::string collection_key(std::string_view coll) {
  std::string k(1, ns::kCollection);
  keys::append_component(k, coll);
  return k;
}

std::string collections_prefix() { return std::string(1, ns::kCollection); }

std::string onodes_prefix(std::string_view coll) {
  std::string k(1, ns::kOnode);
  keys::append_component(k, coll);
  return k;
}

std::string payload_prefix(std::string_view coll) {
  std::string k(1, ns::kPayload);
  keys::append_component(k, coll);
  return k;
}

ObjectKeys::ObjectKeys(std::string_view coll, std::string_view oid)
    : onode_(onodes_prefix(coll)), payload_(payload_prefix(coll)) {
  keys::append_component(onode_, oid);
  keys::append_component(payload_, oid);
}

std::string ObjectKeys::payload_end() const { return keys::prefix_end(payload_); }

std::string ObjectKeys::chunk(uint64_t index) const {
  std::string k = payload_;
  k.push_back(part::kData);
  keys::append_u64(k, index);
  return k;
}

std::string ObjectKeys::chunks_end() const { return payload_ + static_cast<char>(part::kData + 1); }

std::string ObjectKeys::header() const { return payload_ + part::kHeader; }

std::string ObjectKeys::omap(std::string_view key) const {
  std::string k = omap_prefix();
  k.append(key);
  return k;
}

std::string ObjectKeys::omap_prefix() const { return payload_ + part::kOmap; }

std::string ObjectKeys::xattr(std::string_view name) const {
  std::string k = xattr_prefix();
  k.append(name);
  return k;
}

std::string ObjectKeys::xattr_prefix() const { return payload_ + part::kXattr; }

namespace {
void append_printable(std::string &out, std::string_view s) {
  constexpr size_t kMaxShown = 64;
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (s.size() > kMaxShown) out += "...";
}
}  // namespace

std::string describe(std::string_view coll, std::string_view oid) {
  std::string out;
  append_printable(out, coll);
  out.push_back('/');
  append_printable(out, oid);
  return out;
}

std::string describe(std::string_view coll) {
  std::string out;
  append_printable(out, coll);
  return out;
}

}  // namespace strata::kv
