// Replay's walk over the log: from the trim point, follow the chain of valid
// records (format.h) to its end, then decide whether the end is a torn tail
// (records written last and never acknowledged) or corruption before the
// tail (an acknowledged record lost while later ones survive).
//
// The decision: past the end of the chain, search the rest of the ring for a
// valid record of this lap (epoch not older than the chain's last record, seq
// above it). If such a record says that everything up to the chain's end was
// durable when it was written (durable_below), the chain's end was
// acknowledged: corruption, -EUCLEAN. Otherwise such records are survivors of
// the last group-commit write, which was torn: discarded and reported. A
// clean close writes where the log ends into the superblock; when the chain
// ends exactly there the search is skipped.
//
// A damaged record whose seq is at most after_seq (the host has applied and
// checkpointed it) does not end the chain: the walk resumes at the next
// record of the lap when every seq it skips is at most after_seq, and says
// so in `notes`.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "journal_log/format.h"
#include "journal_log/media.h"

namespace strata::journal {

// A record of the valid log, in logical ring positions (position p is ring
// offset p % capacity; positions only grow). `start` includes the pad that
// precedes a record which wrapped to the start of the ring.
struct LiveRecord {
  uint64_t seq;
  uint64_t epoch;
  uint64_t start;
  uint64_t end;
};

struct ScanResult {
  std::deque<LiveRecord> records;  // the valid log, oldest first
  uint64_t start_pos = 0;          // the trim point (= superblock trim_offset)
  uint64_t tail_pos = 0;           // where the next record goes
  std::optional<uint64_t> last_seq;
  uint64_t last_epoch = 0;  // epoch of the last record (the trim epoch if none)
  uint64_t visited = 0;            // records handed to the visitor
  uint64_t torn_bytes = 0;
  std::string detail;  // what was discarded, or ""
  // Damaged records skipped because the host had them already (seq <=
  // after_seq), or "".
  std::string notes;
};

// Return 0 to go on, a negative errno to stop replay with that error.
using RecordVisitor = std::function<int(uint64_t seq, const void *data, size_t len)>;

// Walks the log of `sb` on `media`, visiting records with seq > after_seq in
// order. Throws sdk::Error: -EUCLEAN (with the byte offset and seqs) on
// corruption before the tail, the visitor's errno when it stops, or the
// medium's error. On corruption, *newest_on_corruption (when given) is set
// to the newest seq of the lap found anywhere on the medium.
ScanResult scan_log(Media &media, const Superblock &sb, uint64_t after_seq,
                    const RecordVisitor &visit, uint64_t *newest_on_corruption = nullptr);

}  // namespace strata::journal
