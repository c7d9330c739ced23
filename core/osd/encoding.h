// Binary forms of the OSD's persistent records (PG log entries, PG info,
// missing items, object info) as stored in omap values and xattrs. Little
// endian, each record led by a format byte so it can grow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "osd/types.h"

namespace strata::osd {

// Appends fixed-width integers and length-prefixed strings to a string.
class Encoder {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void str(std::string_view s);
  void ev(const EVersion &v) { u64(v.epoch); u64(v.version); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what Encoder wrote; every getter fails (returns false) past the end.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  bool u8(uint8_t *v);
  bool u32(uint32_t *v);
  bool u64(uint64_t *v);
  bool i32(int32_t *v);
  bool str(std::string *s);
  bool ev(EVersion *v) { return u64(&v->epoch) && u64(&v->version); }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

std::string encode_log_entry(const LogEntry &e);
Result<LogEntry> decode_log_entry(std::string_view bytes);

std::string encode_pg_info(const PgInfo &i);
Result<PgInfo> decode_pg_info(std::string_view bytes);

std::string encode_missing_item(const MissingItem &m);
Result<MissingItem> decode_missing_item(std::string_view bytes);

std::string encode_object_info(const ObjectInfo &oi);
Result<ObjectInfo> decode_object_info(std::string_view bytes);

// Keys in the pg-meta object's omap. Log keys sort by version.
inline constexpr std::string_view kInfoKey = "i";
inline constexpr std::string_view kLogKeyPrefix = "l.";
inline constexpr std::string_view kMissingKeyPrefix = "m.";
// "d." + oid -> why: objects scrub or a read found damaged (primary only).
inline constexpr std::string_view kDamagedKeyPrefix = "d.";
std::string log_key(uint64_t version);  // "l." + 16 hex digits
std::string missing_key(std::string_view oid);

}  // namespace strata::osd
