#include "image_format.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <random>

namespace strata::rbd::format {

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::optional<uint64_t> parse_hex16(std::string_view s) {
  // The format writes lower-case digits only; from_chars would take 'A'-'F'.
  if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return std::nullopt;
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

std::string header_oid(const std::string &id) { return "rbd_header." + id; }

std::string data_oid(const std::string &id, uint64_t objno) {
  return "rbd_data." + id + "." + hex16(objno);
}

std::string dir_name_key(const std::string &name) { return "name_" + name; }
std::string dir_id_key(const std::string &id) { return "id_" + id; }
std::string snap_key(uint64_t snap_id) { return kSnapPrefix + hex16(snap_id); }

std::string encode_u64(uint64_t v) { return std::to_string(v); }

std::optional<uint64_t> decode_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return std::nullopt;  // overflow
    v = next;
  }
  return v;
}

// Splits off the first space-separated field of *rest.
static std::string_view take_field(std::string_view *rest) {
  const size_t sp = rest->find(' ');
  std::string_view field = rest->substr(0, sp);
  *rest = sp == std::string_view::npos ? std::string_view{} : rest->substr(sp + 1);
  return field;
}

std::string encode_snap(const SnapInfo &s) {
  return encode_u64(s.size) + " " + encode_u64(s.created_ns) + " " + encode_u64(s.children) +
         " " + encode_u64(s.parent_overlap) + " " + s.name;
}

std::optional<SnapInfo> decode_snap(uint64_t id, std::string_view v) {
  SnapInfo s;
  s.id = id;
  auto size = decode_u64(take_field(&v));
  auto created = decode_u64(take_field(&v));
  auto children = decode_u64(take_field(&v));
  auto overlap = decode_u64(take_field(&v));
  if (!size || !created || !children || !overlap || v.empty()) return std::nullopt;
  s.size = *size;
  s.created_ns = *created;
  s.children = static_cast<uint32_t>(*children);
  s.parent_overlap = *overlap;
  s.name = std::string(v);
  return s;
}

std::string encode_parent(const ParentSpec &p) {
  return p.pool + "\n" + p.image_id + "\n" + encode_u64(p.snap_id) + "\n" +
         encode_u64(p.overlap) + "\n" + p.image + "\n" + p.snap_name;
}

std::optional<ParentSpec> decode_parent(std::string_view v) {
  std::string fields[6];
  for (int i = 0; i < 6; ++i) {
    const size_t nl = v.find('\n');
    if (nl == std::string_view::npos && i < 5) return std::nullopt;
    fields[i] = std::string(v.substr(0, nl));
    v = nl == std::string_view::npos ? std::string_view{} : v.substr(nl + 1);
  }
  ParentSpec p;
  p.pool = fields[0];
  p.image_id = fields[1];
  auto snap = decode_u64(fields[2]);
  auto overlap = decode_u64(fields[3]);
  if (!snap || !overlap) return std::nullopt;
  p.snap_id = *snap;
  p.overlap = *overlap;
  p.image = fields[4];
  p.snap_name = fields[5];
  return p;
}

std::string name_problem(const std::string &name) {
  if (name.empty()) return "an empty name";
  if (name.size() > 255) return "a name longer than 255 bytes";
  for (char c : name) {
    if (c == '/' || c == '@') return std::string("a name with '") + c + "' in it";
    if (c == '\0') return "a name with a NUL byte in it";
  }
  return "";
}

std::string random_id() {
  // Fresh per call: no shared generator state (STYLE: no global mutable state).
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return hex16(v);
}

std::string encode_lock(const LockValue &l) {
  return l.owner + " " + encode_u64(l.expires_ns) + " " + l.description;
}

std::optional<LockValue> decode_lock(std::string_view v) {
  if (v.empty()) return std::nullopt;
  LockValue l;
  l.owner = std::string(take_field(&v));
  auto exp = decode_u64(take_field(&v));
  if (l.owner.empty() || !exp) return std::nullopt;
  l.expires_ns = *exp;
  l.description = std::string(v);
  return l;
}

uint64_t now_realtime_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace strata::rbd::format
