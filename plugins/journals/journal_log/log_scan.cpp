#include "journal_log/log_scan.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "journal_log/crc32c.h"
#include "journal_log/ring_reader.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {
namespace {

using sdk::make_error;

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// What one ring offset holds.
struct Slot {
  enum Kind { kNothing, kDamagedHeader, kForeign, kBadLength, kBadPayload, kRecord };
  Kind kind = kNothing;
  RecordHeader h;
  uint64_t footprint = 0;  // ring bytes the record spans (a pad: to the ring's end)
  const uint8_t *payload = nullptr;
};

class Walker {
 public:
  Walker(Media &media, const Superblock &sb)
      : sb_(sb),
        cap_(sb.capacity),
        bs_(sb.block_size),
        id_(sb.journal_id()),
        reader_(media, sb.ring_offset, sb.capacity, sb.block_size) {}

  Slot inspect(uint64_t off) {
    Slot s;
    const uint8_t *block = reader_.read(off, bs_);
    if (!has_record_magic(block)) return s;
    std::optional<RecordHeader> h = decode_record_header(block);
    if (!h) {
      s.kind = Slot::kDamagedHeader;
      return s;
    }
    s.h = *h;
    if (h->journal_id != id_) {
      s.kind = Slot::kForeign;
      return s;
    }
    bool is_pad = h->type == RecordType::kPad;
    s.footprint = is_pad ? cap_ - off : record_footprint(h->payload_len, bs_);
    if ((is_pad && (h->payload_len != 0 || off == 0)) || h->payload_len > cap_ ||
        s.footprint > cap_ - off) {
      s.kind = Slot::kBadLength;
      return s;
    }
    if (!is_pad) {
      const uint8_t *bytes = reader_.read(off, s.footprint);
      if (crc32c(bytes + kRecordHeaderSize, h->payload_len) != h->payload_crc) {
        s.kind = Slot::kBadPayload;
        return s;
      }
      s.payload = bytes + kRecordHeaderSize;
    }
    s.kind = Slot::kRecord;
    return s;
  }

  uint64_t medium_offset(uint64_t pos) const { return sb_.ring_offset + pos % cap_; }

  // The position to inspect after `s` at logical position q: past a valid
  // record whole (a newer record inside it would have broken its checksum),
  // past the rest of a hole of the medium when nothing is there (a journal
  // is mostly never-written space until its first lap ends: reading it
  // would fault in, and on tmpfs allocate, every page of the ring), else
  // one block on. Never past the end of the ring, where positions wrap.
  uint64_t next(uint64_t q, const Slot &s) {
    if (s.kind == Slot::kRecord) return q + s.footprint;
    if (s.kind != Slot::kNothing) return q + bs_;
    uint64_t off = q % cap_;
    uint64_t data = reader_.next_data(off + bs_);
    return q + std::max<uint64_t>(bs_, data - off);
  }

 private:
  const Superblock &sb_;
  uint64_t cap_;
  uint32_t bs_;
  uint64_t id_;
  RingReader reader_;
};

const char *kind_reason(Slot::Kind k) {
  switch (k) {
    case Slot::kNothing: return "no record header";
    case Slot::kDamagedHeader: return "damaged record header";
    case Slot::kForeign: return "record of another journal";
    case Slot::kBadLength: return "record length runs past the end of the ring";
    case Slot::kBadPayload: return "payload checksum mismatch";
    case Slot::kRecord: break;
  }
  return "valid record";
}

}  // namespace

ScanResult scan_log(Media &media, const Superblock &sb, uint64_t after_seq,
                    const RecordVisitor &visit, uint64_t *newest_on_corruption) {
  Walker walker(media, sb);
  const uint64_t cap = sb.capacity;
  const uint64_t bs = sb.block_size;
  const uint64_t start = sb.trim_offset;
  const uint64_t limit = start + cap;

  ScanResult r;
  r.start_pos = start;
  // Records older than the trim point's epoch are leftovers of an earlier
  // run that replay discarded; they may sit at the trim point itself.
  r.last_epoch = sb.trim_epoch;

  // 1. Follow the chain.
  // The pad the walk just passed (its record must follow at ring offset 0).
  struct Pad {
    bool active = false;
    uint64_t seq = 0, epoch = 0, start = 0;
  } pad;
  uint64_t pos = start;
  std::string why_end;
  // Where the chain resumed after a damaged record that the host no longer
  // needs (see resume_after_covered): the next record's room starts there.
  bool resumed = false;
  uint64_t resumed_from = 0;
  while (pos < limit) {
    Slot s = walker.inspect(pos % cap);
    const RecordHeader &h = s.h;
    if (s.kind != Slot::kRecord) {
      why_end = kind_reason(s.kind);
      if (s.kind == Slot::kBadPayload)
        why_end += format(" in record seq %" PRIu64, h.seq);
    } else if (h.epoch > sb.epoch) {
      why_end = format("record seq %" PRIu64 " carries epoch %" PRIu64
                       ", newer than the superblock's %" PRIu64,
                       h.seq, h.epoch, sb.epoch);
    } else if (h.epoch < r.last_epoch) {
      why_end = format("record seq %" PRIu64 " of epoch %" PRIu64 " follows epoch %" PRIu64
                       " (left over from an earlier run)",
                       h.seq, h.epoch, r.last_epoch);
    } else if (pad.active && (h.type != RecordType::kData || h.seq != pad.seq ||
                       h.epoch != pad.epoch)) {
      why_end = format("record seq %" PRIu64 " does not match the pad before it (seq %" PRIu64
                       ")",
                       h.seq, pad.seq);
    } else if (!pad.active && r.last_seq && h.seq <= *r.last_seq) {
      why_end = format("record seq %" PRIu64 " does not follow seq %" PRIu64 " (an older lap)",
                       h.seq, *r.last_seq);
    } else if (!pad.active && !r.last_seq && h.seq < sb.trim_seq) {
      why_end = format("record seq %" PRIu64 " is older than the trim point's seq %" PRIu64,
                       h.seq, sb.trim_seq);
    }
    const bool damaged = s.kind == Slot::kBadPayload || s.kind == Slot::kDamagedHeader ||
                         s.kind == Slot::kBadLength;
    // The seq the chain holds up to (below the trim point's seq if none yet).
    const uint64_t prev = r.last_seq ? *r.last_seq : (sb.trim_seq > 0 ? sb.trim_seq - 1 : 0);
    if (!why_end.empty() && damaged && !pad.active && prev < after_seq) {
      // The chain breaks at a record the host has already applied and
      // checkpointed (seq <= after_seq): harmless. Resume at the next record
      // of this lap if every seq skipped is covered too.
      const uint64_t from = s.kind == Slot::kBadPayload ? pos + s.footprint : pos + bs;
      for (uint64_t q = from; q < limit;) {
        Slot n = walker.inspect(q % cap);
        if (n.kind == Slot::kRecord && n.h.type == RecordType::kData &&
            n.h.epoch >= r.last_epoch && n.h.epoch <= sb.epoch && n.h.seq > prev &&
            n.h.seq <= after_seq + 1) {
          r.notes += format("%sskipped a damaged record at byte %" PRIu64 " (%s) after seq %" PRIu64
                            ": seqs %" PRIu64 "..%" PRIu64
                            " are already covered by the checkpoint (seq %" PRIu64 ")",
                            r.notes.empty() ? "" : "; ", walker.medium_offset(pos),
                            why_end.c_str(), prev, prev + 1, n.h.seq - 1,
                            after_seq);
          resumed = true;
          resumed_from = pos;
          pos = q;
          why_end.clear();
          break;
        }
        if (n.kind == Slot::kRecord && n.h.seq > after_seq + 1) break;  // not covered
        q = walker.next(q, n);
      }
      if (!why_end.empty()) break;
      continue;
    }
    if (!why_end.empty()) break;

    if (h.type == RecordType::kPad) {
      pad = Pad{true, h.seq, h.epoch, pos};
      pos += s.footprint;
      continue;
    }
    const uint64_t rec_start = resumed ? resumed_from : (pad.active ? pad.start : pos);
    r.records.push_back({h.seq, h.epoch, rec_start, pos + s.footprint});
    resumed = false;
    pad.active = false;
    r.last_seq = h.seq;
    r.last_epoch = h.epoch;
    if (h.seq > after_seq) {
      int rc = visit(h.seq, s.payload, h.payload_len);
      if (rc < 0)
        throw make_error(rc, "%s: replay stopped by the host at seq %" PRIu64 " (%s)",
                         media.name().c_str(), h.seq, std::strerror(-rc));
      ++r.visited;
    }
    pos += s.footprint;
  }
  const uint64_t break_pos = pos;
  r.tail_pos = pad.active ? pad.start : pos;
  if (r.tail_pos >= limit) return r;  // the chain fills the whole ring
  if (sb.clean && r.tail_pos % cap == sb.clean_tail_offset &&
      r.last_seq.value_or(0) == sb.clean_last_seq)
    return r;  // ends where the last clean close said it would

  // 2. Search the rest of the ring for records of this lap (see log_scan.h).
  const uint64_t floor = r.last_seq ? *r.last_seq + 1 : sb.trim_seq;
  std::string after = r.last_seq ? format("seq %" PRIu64, *r.last_seq)
                                 : std::string("the trim point");
  uint64_t evidence_end = r.tail_pos;
  uint64_t newest_survivor = 0;
  for (uint64_t q = r.tail_pos; q < limit;) {
    uint64_t off = q % cap;
    Slot s = walker.inspect(off);
    const RecordHeader &h = s.h;
    bool of_this_lap = h.epoch >= r.last_epoch && h.epoch <= sb.epoch && h.seq >= floor;
    if (s.kind == Slot::kRecord && of_this_lap) {
      if (h.durable_below > floor && newest_on_corruption) {
        // Say how far the log went: the newest record of this lap anywhere.
        uint64_t newest = h.seq;
        for (uint64_t k = q + s.footprint; k < limit;) {
          Slot n = walker.inspect(k % cap);
          if (n.kind == Slot::kRecord && n.h.epoch >= r.last_epoch && n.h.epoch <= sb.epoch)
            newest = std::max(newest, n.h.seq);
          k = walker.next(k, n);
        }
        *newest_on_corruption = newest;
      }
      if (h.durable_below > floor)
        throw make_error(
            EUCLEAN,
            "%s: journal corrupt before its tail: the record at byte %" PRIu64
            " (ring offset %" PRIu64 ") after %s is invalid (%s), but record seq %" PRIu64
            " at byte %" PRIu64 " was written after every seq below %" PRIu64
            " was durable; acknowledged records would be lost",
            media.name().c_str(), walker.medium_offset(break_pos), break_pos % cap,
            after.c_str(), why_end.c_str(), h.seq, walker.medium_offset(q), h.durable_below);
      // A survivor of the interrupted last write.
      evidence_end = std::max(evidence_end, q + (h.type == RecordType::kPad ? bs : s.footprint));
      newest_survivor = std::max(newest_survivor, h.seq);
    } else if ((s.kind == Slot::kBadPayload && of_this_lap) ||
               (s.kind == Slot::kDamagedHeader && q == break_pos)) {
      // A record whose write was cut short.
      uint64_t len = s.kind == Slot::kBadPayload ? s.footprint : bs;
      evidence_end = std::max(evidence_end, q + len);
    }
    q = walker.next(q, s);
  }

  if (evidence_end > r.tail_pos) {
    r.torn_bytes = evidence_end - r.tail_pos;
    r.detail = format("discarded a torn tail of %" PRIu64 " bytes at byte %" PRIu64
                      " (ring offset %" PRIu64 ") after %s: %s",
                      r.torn_bytes, walker.medium_offset(r.tail_pos), r.tail_pos % cap,
                      after.c_str(), why_end.c_str());
    if (newest_survivor)
      r.detail += format("; unacknowledged records up to seq %" PRIu64 " dropped",
                         newest_survivor);
  }
  return r;
}

}  // namespace strata::journal
