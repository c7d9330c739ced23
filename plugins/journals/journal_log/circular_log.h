// A journal as a circular log on a Media: replay, append with group commit,
// trim, flush, stat. The semantics are those of strata/journal.h; this class
// is what both journal-media plugins run, with their own Media underneath.
//
// Group commit: append() lays the record out in the ring (reserving its
// place, blocking while there is no room) and queues it; one writer thread
// takes everything queued, lays it out in one aligned buffer, writes it with
// one device write per contiguous run plus one flush, and then runs the
// callbacks in seq order. While a write is in flight new appends queue up, so
// the next write carries all of them: the slower the device, the bigger the
// batches.
//
// Trim point persistence is lazy: trim() frees space in memory at once; the
// superblock learns of it at most every trim_persist_interval, and always
// before the writer reuses space that the superblock still counts as live.
// So replay after a crash may start earlier than the latest trim (the host
// skips seqs it already has), never later.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "journal_log/aligned_buffer.h"
#include "journal_log/format.h"
#include "journal_log/log_scan.h"
#include "journal_log/media.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/journal.h"

namespace strata::journal {

struct LogOptions {
  // Upper bound of one group-commit write (a single larger record is written
  // alone).
  uint64_t max_batch_bytes = uint64_t{4} << 20;
  // How stale the superblock's trim point may get while the log is idle.
  std::chrono::milliseconds trim_persist_interval{1000};
};

class CircularLog {
 public:
  // Opens the journal on `media` by reading its superblock. Throws
  // sdk::Error (-EUCLEAN without a valid superblock).
  CircularLog(std::unique_ptr<Media> media, LogOptions options, sdk::Logger logger);
  // Waits until every queued append is durable and its callback ran, then
  // records a clean close in the superblock. Appends blocked for room fail.
  ~CircularLog();
  CircularLog(const CircularLog &) = delete;
  CircularLog &operator=(const CircularLog &) = delete;

  // Visits the records with seq > after_seq; see log_scan.h. May be called
  // again until the first append; append() replays (visiting nothing) if it
  // was never called. On -EUCLEAN the log refuses appends from then on.
  strata_journal_replay_result replay(uint64_t after_seq, const RecordVisitor &visit);

  // Copies the record and queues it; `done` runs on the writer thread once it
  // and every earlier record are durable (or the medium failed). Blocks while
  // the ring has no room. Throws -EFBIG (larger than the ring), -EINVAL (seq
  // out of order), -EUCLEAN (corrupt log), -EIO (an earlier write failed).
  // Thread-safe; concurrent appends are serialised (the caller orders seqs).
  void append(uint64_t seq, const void *data, size_t len, strata_journal_done_cb done,
              void *arg);
  // Records with seq <= upto_seq may go; their room is reusable once they are
  // durable. Thread-safe.
  void trim(uint64_t upto_seq);
  // Returns when every record appended before the call is durable. Must not
  // be called from a done callback (it would wait for itself).
  void flush();
  strata_journal_stat stat();

  // Checks that the journal belongs to `owner` (journal.h, "Owner"): throws
  // -EXDEV naming both owners when it records another one; records `owner`
  // when it records none (a journal made before owners existed). Does
  // nothing for an owner without id. Call right after construction.
  void claim(const JournalOwner &owner);

  Media &media() { return *media_; }

 private:
  struct Pending {
    uint64_t seq;
    uint64_t pad_pos;  // where the pad before the record starts; == rec_pos if none
    uint64_t rec_pos;  // logical ring positions (log_scan.h)
    uint64_t footprint;
    // The log was empty and the record starts the next lap without a pad:
    // the superblock must point at it before it is written (a pad there
    // could overlap the record itself).
    bool moves_trim_point;
    std::unique_ptr<uint8_t[]> payload;
    size_t len;
    uint32_t crc;
    strata_journal_done_cb done;
    void *arg;
  };
  struct TrimPoint {
    uint64_t pos, seq, epoch;
  };
  using Clock = std::chrono::steady_clock;

  strata_journal_replay_result replay_holding_append_mu(uint64_t after_seq,
                                                        const RecordVisitor &visit);
  void throw_if_unusable_locked() const;  // REQUIRES: mu_ held
  void apply_trim_locked();               // REQUIRES: mu_ held
  TrimPoint trim_point_locked() const;    // REQUIRES: mu_ held
  bool trim_point_dirty_locked() const { return trim_pos_ != persisted_trim_pos_; }

  void writer_main();
  // Writes the batch's records (and the pads before them) with one write per
  // contiguous run and one flush. Writer thread only.
  size_t write_batch(const std::vector<Pending> &batch, uint64_t durable_below);
  void persist_trim_point(const TrimPoint &tp, bool clean, uint64_t clean_tail,
                          uint64_t clean_last_seq);
  void fail_everything(std::vector<Pending> &batch, int rc, const std::string &msg);

  // Immutable after construction.
  std::unique_ptr<Media> media_;
  const LogOptions options_;
  const sdk::Logger log_;

  // The superblock as last written: used by replay before the writer starts,
  // then by the writer thread (and by close after the writer is gone).
  Superblock sb_;

  // Immutable after construction (from the superblock read at open).
  const uint64_t cap_;
  const uint32_t bs_;
  const uint64_t journal_id_;

  AlignedBuffer batch_buf_;  // writer thread only

  std::mutex append_mu_;  // serialises append() and replay(): queue order = seq order

  mutable std::mutex mu_;
  std::condition_variable work_cv_;     // the writer waits for work
  std::condition_variable room_cv_;     // appends wait for room
  std::condition_variable durable_cv_;  // flush waits for durability
  // Everything below: GUARDED_BY(mu_).
  bool replayed_ = false;
  bool appended_ = false;   // since open; replay is refused afterwards
  bool stopping_ = false;
  int unusable_rc_ = 0;     // -EUCLEAN after corruption, the medium's errno after a failure
  std::string unusable_msg_;
  uint64_t session_epoch_ = 0;
  std::deque<LiveRecord> live_;  // trim point .. tail: durable and queued records
  std::deque<Pending> queue_;    // appended, not yet taken by the writer
  uint64_t trim_pos_ = 0;
  uint64_t tail_pos_ = 0;
  std::optional<uint64_t> last_seq_;  // newest seq the journal ever held
  uint64_t durable_seq_ = 0;
  uint64_t trim_target_ = 0;
  uint64_t persisted_trim_pos_ = 0;
  Clock::time_point last_persist_{};
  uint64_t device_writes_ = 0;
  uint64_t records_written_ = 0;

  std::thread writer_;  // started by the first append
};

}  // namespace strata::journal
