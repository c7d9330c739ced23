#include "mds/store_names.h"

#include <xxhash.h>

#include <cstdio>

namespace strata::mds {

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

static std::string hex8(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string segment_oid(uint64_t seg) { return "j." + hex16(seg); }

std::string dir_oid(Ino dir, uint32_t frag) {
  std::string s = "d." + hex16(dir);
  if (frag) s += "." + hex8(frag);
  return s;
}

std::string inode_oid(Ino ino) { return "i." + hex16(ino); }

std::string backptr_oid(Ino ino) {
  static const char kHex[] = "0123456789abcdef";
  unsigned shard = static_cast<unsigned>(ino % 64);
  return std::string("b.") + kHex[shard >> 4] + kHex[shard & 15];
}
std::string data_oid(Ino ino, uint64_t n) { return hex16(ino) + "." + hex8(n); }
std::string session_key(uint64_t id) { return "session." + hex16(id); }
std::string purge_key(Ino ino) { return "purge." + hex16(ino); }

std::optional<uint64_t> parse_hex(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else
      return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

std::optional<DirOid> parse_dir_oid(std::string_view oid) {
  if (oid.size() < 18 || oid.substr(0, 2) != "d.") return std::nullopt;
  auto ino = oid.size() >= 18 ? parse_hex(oid.substr(2, 16)) : std::nullopt;
  if (!ino) return std::nullopt;
  if (oid.size() == 18) return DirOid{*ino, 0};
  if (oid.size() != 27 || oid[18] != '.') return std::nullopt;
  auto frag = parse_hex(oid.substr(19, 8));
  if (!frag) return std::nullopt;
  return DirOid{*ino, static_cast<uint32_t>(*frag)};
}

std::optional<Ino> parse_inode_oid(std::string_view oid) {
  if (oid.size() != 18 || oid.substr(0, 2) != "i.") return std::nullopt;
  return parse_hex(oid.substr(2));
}

std::optional<Ino> parse_data_oid(std::string_view oid) {
  if (oid.size() != 25 || oid[16] != '.' || !parse_hex(oid.substr(17))) return std::nullopt;
  return parse_hex(oid.substr(0, 16));
}

uint32_t frag_of(std::string_view name, uint8_t bits) {
  if (bits == 0) return 0;
  uint64_t h = XXH64(name.data(), name.size(), 0);
  return static_cast<uint32_t>(h & ((uint64_t{1} << bits) - 1));
}

}  // namespace strata::mds
