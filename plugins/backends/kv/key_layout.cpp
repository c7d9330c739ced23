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

// Object names shown in errors: long enough to tell objects apart.
constexpr size_t kNameShown = 64;

std::string describe(std::string_view coll, std::string_view oid) {
  std::string out;
  keys::append_printable(out, coll, kNameShown);
  out.push_back('/');
  keys::append_printable(out, oid, kNameShown);
  return out;
}

std::string describe(std::string_view coll) {
  std::string out;
  keys::append_printable(out, coll, kNameShown);
  return out;
}

}  // namespace strata::kv
