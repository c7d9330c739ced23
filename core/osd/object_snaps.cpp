#include "osd/object_snaps.h"

#include <algorithm>
#include <cstdio>

#include "osd/encoding.h"

namespace strata::osd {

namespace {
constexpr uint8_t kSnapSetFormat = 1;
}

std::string snapset_object(std::string_view oid) {
  std::string n(oid);
  n += '\0';
  n += "snapset";
  return n;
}

std::string clone_object(std::string_view oid, uint64_t id) {
  char tag[32];
  std::snprintf(tag, sizeof tag, "clone.%016llx", static_cast<unsigned long long>(id));
  std::string n(oid);
  n += '\0';
  n += tag;
  return n;
}

bool is_snap_companion(std::string_view name) { return name.find('\0') != std::string_view::npos; }

std::string encode_snapset(const SnapSet &ss) {
  Encoder e;
  e.u8(kSnapSetFormat);
  e.u64(ss.seq);
  e.u32(static_cast<uint32_t>(ss.clones.size()));
  for (const SnapClone &c : ss.clones) {
    e.u64(c.id);
    e.u64(c.size);
    e.u8(c.exists ? 1 : 0);
  }
  return e.take();
}

Result<SnapSet> decode_snapset(std::string_view in) {
  Decoder d(in);
  SnapSet ss;
  uint8_t format = 0;
  uint32_t n = 0;
  if (!d.u8(&format) || format != kSnapSetFormat || !d.u64(&ss.seq) || !d.u32(&n) ||
      n > in.size() / 17)
    return Status::Error(EIO, "snap set record is not in a known format");
  ss.clones.resize(n);
  for (SnapClone &c : ss.clones) {
    uint8_t exists = 0;
    if (!d.u64(&c.id) || !d.u64(&c.size) || !d.u8(&exists))
      return Status::Error(EIO, "snap set record is truncated");
    c.exists = exists != 0;
  }
  if (!d.done()) return Status::Error(EIO, "snap set record has trailing bytes");
  return ss;
}

Result<SnapSet> load_snapset(store::Store &store, std::string_view coll, std::string_view oid) {
  auto v = store.getxattr(coll, snapset_object(oid), kSnapSetAttr);
  if (!v.ok()) {
    int code = v.status().code();
    if (code == -ENOENT || code == -ENODATA) return SnapSet{};
    return v.status().Context("snap set of '" + std::string(oid) + "'");
  }
  auto ss = decode_snapset(*v);
  if (!ss.ok()) return ss.status().Context("snap set of '" + std::string(oid) + "'");
  return ss;
}

std::optional<SnapClone> clone_serving(const SnapSet &ss, uint64_t snapid) {
  auto it = std::lower_bound(ss.clones.begin(), ss.clones.end(), snapid,
                             [](const SnapClone &c, uint64_t id) { return c.id < id; });
  if (it == ss.clones.end()) return std::nullopt;
  return *it;
}

std::vector<SnapClone> clones_unneeded(const SnapSet &ss, const std::vector<uint64_t> &keep) {
  std::vector<bool> needed(ss.clones.size(), false);
  for (uint64_t r : keep) {
    auto it = std::lower_bound(ss.clones.begin(), ss.clones.end(), r,
                               [](const SnapClone &c, uint64_t id) { return c.id < id; });
    if (it != ss.clones.end()) needed[static_cast<size_t>(it - ss.clones.begin())] = true;
  }
  std::vector<SnapClone> out;
  for (size_t i = 0; i < ss.clones.size(); ++i)
    if (!needed[i]) out.push_back(ss.clones[i]);
  return out;
}

std::vector<std::string> companion_objects(std::string_view oid, const SnapSet &ss) {
  std::vector<std::string> out;
  if (ss.seq == 0 && ss.clones.empty()) return out;
  out.push_back(snapset_object(oid));
  for (const SnapClone &c : ss.clones)
    if (c.exists) out.push_back(clone_object(oid, c.id));
  return out;
}

}  // namespace strata::osd
