#include "placement/binary_format.h"

#include <xxhash.h>

#include <cstring>

#include "placement/map_validation.h"

namespace strata::placement {

namespace {

enum Section : uint16_t {
  kTunables = 1,
  kTypes = 2,
  kDevices = 3,
  kBuckets = 4,
  kRules = 5,
  kExceptions = 6,
};
constexpr uint16_t kSectionRequired = 1;
constexpr size_t kHeaderSize = 4 + 2 + 2 + 4 + 8;

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(char(v)); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void i32(int32_t v) { put(uint32_t(v), 4); }
  void u64(uint64_t v) { put(v, 8); }
  void str(const std::string &s) {
    u16(uint16_t(s.size()));
    out_ += s.substr(0, 0xffff);
  }
  void section(uint16_t tag, const Writer &body) {
    u16(tag);
    u16(kSectionRequired);
    u32(uint32_t(body.out_.size()));
    out_ += body.out_;
  }
  const std::string &bytes() const { return out_; }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(char(uint8_t(v >> (8 * i))));
  }
  std::string out_;
};

// Reads little-endian values; after the first overrun every read yields 0
// and ok() turns false, so decoding code checks once per section.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint8_t u8() { return uint8_t(get(1)); }
  uint16_t u16() { return uint16_t(get(2)); }
  uint32_t u32() { return uint32_t(get(4)); }
  int32_t i32() { return int32_t(uint32_t(get(4))); }
  uint64_t u64() { return get(8); }
  std::string str() {
    size_t n = u16();
    if (!take(n)) return {};
    return std::string(in_.substr(pos_ - n, n));
  }
  std::string_view bytes(size_t n) {
    if (!take(n)) return {};
    return in_.substr(pos_ - n, n);
  }
  // A count of elements each at least `min_size` bytes, bounded by what is
  // left, so a corrupt count cannot make the decoder allocate wildly.
  uint32_t count(size_t min_size) {
    uint32_t n = u32();
    if (size_t(n) * min_size > in_.size() - pos_) {
      ok_ = false;
      return 0;
    }
    return n;
  }
  bool ok() const { return ok_; }
  bool done() const { return pos_ == in_.size(); }

 private:
  bool take(size_t n) {
    if (!ok_ || in_.size() - pos_ < n) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  uint64_t get(int n) {
    if (!take(size_t(n))) return 0;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(uint8_t(in_[pos_ - size_t(n) + size_t(i)])) << (8 * i);
    return v;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

Status corrupt(const std::string &what) {
  return Status::Error(EINVAL, "binary placement map: " + what);
}

Status decode_section(uint16_t tag, std::string_view body, PlacementMap *map) {
  Reader r(body);
  switch (tag) {
    case kTunables:
      map->tunables.choose_total_tries = r.u32();
      break;
    case kTypes:
      for (uint32_t n = r.count(6); n > 0 && r.ok(); --n) {
        TypeDef t;
        t.id = r.u32();
        t.name = r.str();
        map->types.push_back(std::move(t));
      }
      break;
    case kDevices:
      for (uint32_t n = r.count(17); n > 0 && r.ok(); --n) {
        Device d;
        d.id = r.i32();
        d.name = r.str();
        d.weight = r.u32();
        d.device_class = r.str();
        d.reweight = r.u32();
        d.out = r.u8() != 0;
        map->devices.push_back(std::move(d));
      }
      break;
    case kBuckets:
      for (uint32_t n = r.count(14); n > 0 && r.ok(); --n) {
        Bucket b;
        b.id = r.i32();
        b.name = r.str();
        b.type = r.u32();
        for (uint32_t k = r.count(4); k > 0 && r.ok(); --k) b.items.push_back(r.i32());
        map->buckets.push_back(std::move(b));
      }
      break;
    case kRules:
      for (uint32_t n = r.count(10); n > 0 && r.ok(); --n) {
        Rule rule;
        rule.id = r.u32();
        rule.name = r.str();
        for (uint32_t k = r.count(15); k > 0 && r.ok(); --k) {
          Step s;
          uint32_t op = r.u32();
          if (op < STRATA_PLACEMENT_STEP_TAKE || op > STRATA_PLACEMENT_STEP_EMIT)
            return corrupt("rule '" + rule.name + "' has unknown step op " + std::to_string(op));
          s.op = StepOp(op);
          s.bucket = r.i32();
          s.device_class = r.str();
          s.count = r.i32();
          s.type = r.u32();
          rule.steps.push_back(std::move(s));
        }
        map->rules.push_back(std::move(rule));
      }
      break;
    case kExceptions:
      for (uint32_t n = r.count(12); n > 0 && r.ok(); --n) {
        PgId pg{r.u32(), r.u32()};
        auto &remaps = map->exceptions[pg];
        for (uint32_t k = r.count(8); k > 0 && r.ok(); --k) {
          Remap m;
          m.from = r.i32();
          m.to = r.i32();
          remaps.push_back(m);
        }
      }
      break;
    default:
      return Status::OK();  // handled by the caller
  }
  if (!r.ok() || !r.done())
    return corrupt("section " + std::to_string(tag) + " is truncated or has trailing bytes");
  return Status::OK();
}

}  // namespace

std::string encode_binary(const PlacementMap &map) {
  Writer payload;
  {
    Writer s;
    s.u32(map.tunables.choose_total_tries);
    payload.section(kTunables, s);
  }
  {
    Writer s;
    s.u32(uint32_t(map.types.size()));
    for (const TypeDef &t : map.types) {
      s.u32(t.id);
      s.str(t.name);
    }
    payload.section(kTypes, s);
  }
  {
    Writer s;
    s.u32(uint32_t(map.devices.size()));
    for (const Device &d : map.devices) {
      s.i32(d.id);
      s.str(d.name);
      s.u32(d.weight);
      s.str(d.device_class);
      s.u32(d.reweight);
      s.u8(d.out ? 1 : 0);
    }
    payload.section(kDevices, s);
  }
  {
    Writer s;
    s.u32(uint32_t(map.buckets.size()));
    for (const Bucket &b : map.buckets) {
      s.i32(b.id);
      s.str(b.name);
      s.u32(b.type);
      s.u32(uint32_t(b.items.size()));
      for (int32_t item : b.items) s.i32(item);
    }
    payload.section(kBuckets, s);
  }
  {
    Writer s;
    s.u32(uint32_t(map.rules.size()));
    for (const Rule &r : map.rules) {
      s.u32(r.id);
      s.str(r.name);
      s.u32(uint32_t(r.steps.size()));
      for (const Step &st : r.steps) {
        s.u32(uint32_t(st.op));
        s.i32(st.bucket);
        s.str(st.device_class);
        s.i32(st.count);
        s.u32(st.type);
      }
    }
    payload.section(kRules, s);
  }
  {
    Writer s;
    s.u32(uint32_t(map.exceptions.size()));
    for (const auto &[pg, remaps] : map.exceptions) {
      s.u32(pg.pool);
      s.u32(pg.seed);
      s.u32(uint32_t(remaps.size()));
      for (const Remap &m : remaps) {
        s.i32(m.from);
        s.i32(m.to);
      }
    }
    payload.section(kExceptions, s);
  }

  Writer header;
  for (char c : kBinaryMagic) header.u8(uint8_t(c));
  header.u16(kBinaryFormatVersion);
  header.u16(0);
  header.u32(uint32_t(payload.bytes().size()));
  header.u64(XXH64(payload.bytes().data(), payload.bytes().size(), 0));
  return header.bytes() + payload.bytes();
}

bool looks_binary(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kBinaryMagic, 4) == 0;
}

Result<PlacementMap> decode_binary(std::string_view bytes) {
  if (!looks_binary(bytes)) return corrupt("bad magic (not a binary placement map)");
  if (bytes.size() < kHeaderSize) return corrupt("truncated header");
  Reader h(bytes.substr(4, kHeaderSize - 4));
  uint16_t version = h.u16();
  h.u16();  // flags
  uint32_t length = h.u32();
  uint64_t checksum = h.u64();
  if (version > kBinaryFormatVersion)
    return corrupt("format version " + std::to_string(version) + " is newer than this host reads (" +
                   std::to_string(kBinaryFormatVersion) + ")");
  std::string_view payload = bytes.substr(kHeaderSize);
  if (payload.size() != length)
    return corrupt("payload is " + std::to_string(payload.size()) + " bytes, header says " +
                   std::to_string(length) + " (truncated or padded)");
  uint64_t actual = XXH64(payload.data(), payload.size(), 0);
  if (actual != checksum) return corrupt("checksum mismatch (the map is corrupt)");

  PlacementMap map;
  Reader r(payload);
  while (!r.done()) {
    uint16_t tag = r.u16();
    uint16_t flags = r.u16();
    uint32_t len = r.u32();
    std::string_view body = r.bytes(len);
    if (!r.ok()) return corrupt("truncated section header");
    if (tag < kTunables || tag > kExceptions) {
      if (flags & kSectionRequired)
        return corrupt("unknown required section " + std::to_string(tag) +
                       " (written by a newer Strata)");
      continue;
    }
    if (Status s = decode_section(tag, body, &map); !s.ok()) return s;
  }
  if (Status s = validate_map(map); !s.ok()) return s.Context("binary placement map");
  return map;
}

}  // namespace strata::placement
