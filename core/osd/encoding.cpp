#include "osd/encoding.h"

#include <cstdio>
#include <cstring>

namespace strata::osd {

namespace {
constexpr uint8_t kFormat = 1;

Status corrupt(const char *what) {
  return Status::Error(EUCLEAN, std::string("corrupt ") + what + " record");
}
}  // namespace

void Encoder::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
}

void Encoder::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
}

void Encoder::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  out_.append(s);
}

bool Decoder::u8(uint8_t *v) {
  if (pos_ + 1 > in_.size()) return false;
  *v = static_cast<uint8_t>(in_[pos_++]);
  return true;
}

bool Decoder::u32(uint32_t *v) {
  if (pos_ + 4 > in_.size()) return false;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= uint32_t(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
  pos_ += 4;
  *v = r;
  return true;
}

bool Decoder::u64(uint64_t *v) {
  if (pos_ + 8 > in_.size()) return false;
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r |= uint64_t(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
  pos_ += 8;
  *v = r;
  return true;
}

bool Decoder::i32(int32_t *v) {
  uint32_t u;
  if (!u32(&u)) return false;
  *v = static_cast<int32_t>(u);
  return true;
}

bool Decoder::str(std::string *s) {
  uint32_t n;
  if (!u32(&n) || pos_ + n > in_.size()) return false;
  s->assign(in_.data() + pos_, n);
  pos_ += n;
  return true;
}

std::string encode_log_entry(const LogEntry &e) {
  Encoder en;
  en.u8(kFormat);
  en.ev(e.version);
  en.str(e.oid);
  en.u8(static_cast<uint8_t>(e.op));
  en.str(e.reqid.client);
  en.u64(e.reqid.tid);
  en.i32(e.rc);
  en.u64(e.mtime_ns);
  return en.take();
}

Result<LogEntry> decode_log_entry(std::string_view bytes) {
  Decoder d(bytes);
  LogEntry e;
  uint8_t fmt = 0, op = 0;
  if (!d.u8(&fmt) || fmt != kFormat || !d.ev(&e.version) || !d.str(&e.oid) || !d.u8(&op) ||
      !d.str(&e.reqid.client) || !d.u64(&e.reqid.tid) || !d.i32(&e.rc) || !d.u64(&e.mtime_ns))
    return corrupt("log entry");
  if (op != 1 && op != 2) return corrupt("log entry");
  e.op = static_cast<LogOp>(op);
  return e;
}

std::string encode_pg_info(const PgInfo &i) {
  Encoder en;
  en.u8(kFormat);
  en.u32(i.pgid.pool);
  en.u32(i.pgid.seed);
  en.ev(i.last_update);
  en.ev(i.log_tail);
  en.u64(i.les);
  en.u8(i.backfill_complete ? 1 : 0);
  auto put = [&en](const PastInterval &p) {
    en.u64(p.first);
    en.u64(p.last);
    en.i32(p.primary);
    en.u8(p.maybe_went_rw ? 1 : 0);
    en.u32(static_cast<uint32_t>(p.acting.size()));
    for (int32_t o : p.acting) en.i32(o);
  };
  en.u32(static_cast<uint32_t>(i.past_intervals.size()));
  for (const PastInterval &p : i.past_intervals) put(p);
  put(i.current);
  return en.take();
}

Result<PgInfo> decode_pg_info(std::string_view bytes) {
  Decoder d(bytes);
  PgInfo i;
  uint8_t fmt = 0, complete = 0;
  uint32_t n = 0;
  if (!d.u8(&fmt) || fmt != kFormat || !d.u32(&i.pgid.pool) || !d.u32(&i.pgid.seed) ||
      !d.ev(&i.last_update) || !d.ev(&i.log_tail) || !d.u64(&i.les) || !d.u8(&complete) ||
      !d.u32(&n))
    return corrupt("pg info");
  i.backfill_complete = complete != 0;
  auto get = [&d](PastInterval &p) {
    uint8_t rw = 0;
    uint32_t m = 0;
    if (!d.u64(&p.first) || !d.u64(&p.last) || !d.i32(&p.primary) || !d.u8(&rw) || !d.u32(&m))
      return false;
    p.maybe_went_rw = rw != 0;
    for (uint32_t j = 0; j < m; ++j) {
      int32_t o;
      if (!d.i32(&o)) return false;
      p.acting.push_back(o);
    }
    return true;
  };
  for (uint32_t k = 0; k < n; ++k) {
    PastInterval p;
    if (!get(p)) return corrupt("pg info");
    i.past_intervals.push_back(std::move(p));
  }
  if (!get(i.current)) return corrupt("pg info");
  return i;
}

std::string encode_missing_item(const MissingItem &m) {
  Encoder en;
  en.u8(kFormat);
  en.ev(m.need);
  en.u8(m.is_delete ? 1 : 0);
  return en.take();
}

Result<MissingItem> decode_missing_item(std::string_view bytes) {
  Decoder d(bytes);
  MissingItem m;
  uint8_t fmt = 0, del = 0;
  if (!d.u8(&fmt) || fmt != kFormat || !d.ev(&m.need) || !d.u8(&del))
    return corrupt("missing item");
  m.is_delete = del != 0;
  return m;
}

std::string encode_object_info(const ObjectInfo &oi) {
  Encoder en;
  en.u8(kFormat);
  en.ev(oi.version);
  en.u64(oi.mtime_ns);
  // Optional trailing field: object infos written before it decode as
  // "no digest".
  if (oi.has_data_digest) {
    en.u8(1);
    en.u32(oi.data_digest);
  }
  return en.take();
}

Result<ObjectInfo> decode_object_info(std::string_view bytes) {
  Decoder d(bytes);
  ObjectInfo oi;
  uint8_t fmt = 0;
  if (!d.u8(&fmt) || fmt != kFormat || !d.ev(&oi.version) || !d.u64(&oi.mtime_ns))
    return corrupt("object info");
  if (!d.done()) {
    uint8_t has = 0;
    if (!d.u8(&has) || has != 1 || !d.u32(&oi.data_digest)) return corrupt("object info digest");
    oi.has_data_digest = true;
  }
  return oi;
}

std::string log_key(uint64_t version) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(version));
  return std::string(kLogKeyPrefix) + buf;
}

std::string missing_key(std::string_view oid) {
  std::string k(kMissingKeyPrefix);
  k.append(oid);
  return k;
}

}  // namespace strata::osd
