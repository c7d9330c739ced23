#include "txn_gen.h"

#include <cstring>

namespace strata::testing {

namespace {

const char *const kObjectNames[] = {"obj.0", "obj.1",   "obj.2", "obj.3",
                                    "obj.4", "dir/sub", ".dot",  "sp ace"};
constexpr uint32_t kNamedObjects = sizeof kObjectNames / sizeof kObjectNames[0];
const char *const kXattrNames[] = {"user.a", "user.b", "snapset", "_"};
constexpr uint32_t kOmapKeys = 24;

enum class Kind {
  kWrite,
  kAppend,
  kWriteFull,
  kTruncate,
  kZero,
  kRemove,
  kTouch,
  kSetXattr,
  kRmXattr,
  kOmapSet,
  kOmapRm,
  kOmapClear,
  kOmapRmRange,
  kOmapHeader,
  kClone,
};

struct Weight {
  Kind kind;
  uint32_t weight;
};

// Clone's share comes from GenConfig::clone_pct; these fill the rest.
constexpr Weight kWeights[] = {
    {Kind::kWrite, 18},      {Kind::kAppend, 12},    {Kind::kWriteFull, 6}, {Kind::kTruncate, 7},
    {Kind::kZero, 6},        {Kind::kRemove, 3},     {Kind::kTouch, 3},     {Kind::kSetXattr, 9},
    {Kind::kRmXattr, 4},     {Kind::kOmapSet, 12},   {Kind::kOmapRm, 5},    {Kind::kOmapClear, 1},
    {Kind::kOmapRmRange, 3}, {Kind::kOmapHeader, 4},
};

std::string omap_key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "key.%02u", static_cast<unsigned>(i));
  return buf;
}

}  // namespace

std::string pattern_bytes(uint64_t key, size_t len) {
  std::string out(len, '\0');
  SplitMix r(key);
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t v = r.next();
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < len) {
    uint64_t v = r.next();
    std::memcpy(out.data() + i, &v, len - i);
  }
  return out;
}

std::vector<std::string> TxnGenerator::collections() { return {"pg.1", "pg.2"}; }

std::vector<std::string> TxnGenerator::object_names() const {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < cfg_.objects_per_collection; ++i)
    out.push_back(i < kNamedObjects ? kObjectNames[i] : "obj.x" + std::to_string(i));
  return out;
}

store::Transaction TxnGenerator::txn(uint64_t k) const {
  store::Transaction t;
  SplitMix r(cfg_.seed * 0x100000001b3ull ^ (k * 0x9e3779b97f4a7c15ull) ^ 0xabcdef);
  const std::vector<std::string> colls = collections();
  const std::vector<std::string> names = object_names();
  if (k == 1)
    for (const std::string &c : colls) t.mkcoll(c);

  uint32_t total = cfg_.clone_pct;
  for (const Weight &w : kWeights) total += w.weight;

  const uint32_t n_ops = static_cast<uint32_t>(r.range(1, cfg_.max_ops));
  const uint32_t large_at =
      r.percent(cfg_.large_pct) ? static_cast<uint32_t>(r.range(0, n_ops - 1)) : UINT32_MAX;
  for (uint32_t i = 0; i < n_ops; ++i) {
    const uint64_t data_key = (k << 8) ^ i ^ (cfg_.seed << 40);
    const std::string &c = colls[r.range(0, colls.size() - 1)];
    const std::string &o = names[r.range(0, names.size() - 1)];
    if (i == large_at) {
      size_t len = r.range(cfg_.large_min, cfg_.large_max - 1);
      t.write_full(c, o, pattern_bytes(data_key, len));
      continue;
    }
    uint64_t pick = r.range(0, total - 1);
    Kind kind = Kind::kClone;
    for (const Weight &w : kWeights) {
      if (pick < w.weight) {
        kind = w.kind;
        break;
      }
      pick -= w.weight;
    }
    switch (kind) {
      case Kind::kWrite: {
        uint64_t off = r.range(0, cfg_.max_offset);
        size_t len = r.range(1, cfg_.max_small_write);
        t.write(c, o, off, pattern_bytes(data_key, len));
        break;
      }
      case Kind::kAppend:
        t.append(c, o, pattern_bytes(data_key, r.range(1, 4096)));
        break;
      case Kind::kWriteFull:
        t.write_full(c, o, pattern_bytes(data_key, r.range(0, 16 * 1024)));
        break;
      case Kind::kTruncate:
        t.truncate(c, o, r.range(0, cfg_.max_truncate));
        break;
      case Kind::kZero:
        t.zero(c, o, r.range(0, cfg_.max_offset), r.range(1, 16 * 1024));
        break;
      case Kind::kRemove:
        t.remove(c, o);
        break;
      case Kind::kTouch:
        t.touch(c, o);
        break;
      case Kind::kSetXattr: {
        size_t len = r.percent(10) ? r.range(1024, 4096) : r.range(0, 64);
        t.setxattr(c, o, kXattrNames[r.range(0, 3)], pattern_bytes(data_key, len));
        break;
      }
      case Kind::kRmXattr:
        t.rmxattr(c, o, kXattrNames[r.range(0, 3)]);
        break;
      case Kind::kOmapSet: {
        uint64_t n = r.range(1, 3);
        for (uint64_t j = 0; j < n; ++j)
          t.omap_set(c, o, omap_key(r.range(0, kOmapKeys - 1)),
                     pattern_bytes(data_key + (j << 4), r.range(0, 200)));
        break;
      }
      case Kind::kOmapRm:
        t.omap_rm(c, o, omap_key(r.range(0, kOmapKeys - 1)));
        break;
      case Kind::kOmapClear:
        t.omap_clear(c, o);
        break;
      case Kind::kOmapRmRange: {
        uint64_t a = r.range(0, kOmapKeys - 1), b = r.range(a + 1, kOmapKeys);
        t.omap_rm_range(c, o, omap_key(a), omap_key(b));
        break;
      }
      case Kind::kOmapHeader:
        t.omap_set_header(c, o, pattern_bytes(data_key, r.range(0, 128)));
        break;
      case Kind::kClone: {
        const std::string &dst = names[r.range(0, names.size() - 1)];
        if (dst == o) {
          t.touch(c, o);
          break;
        }
        t.touch(c, o);  // a clone's source always exists
        t.clone(c, o, dst);
        break;
      }
    }
  }
  t.setxattr(kCounterCollection, kCounterObject, kLastXattr, std::to_string(k));
  return t;
}

Status TxnGenerator::advance(Model &m, uint64_t from, uint64_t to) const {
  for (uint64_t k = from; k <= to; ++k) {
    Status st = m.apply(txn(k));
    if (!st.ok()) return st.Context("model of txn " + std::to_string(k));
  }
  return Status::OK();
}

}  // namespace strata::testing
