#include "journal_log/circular_log.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "journal_log/crc32c.h"
#include "journal_log/superblock_io.h"

namespace strata::journal {

using sdk::make_error;

CircularLog::CircularLog(std::unique_ptr<Media> media, LogOptions options, sdk::Logger logger)
    : media_(std::move(media)),
      options_(options),
      log_(logger),
      sb_(load_superblock(*media_)),
      cap_(sb_.capacity),
      bs_(sb_.block_size),
      journal_id_(sb_.journal_id()) {}

CircularLog::~CircularLog() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  room_cv_.notify_all();
  if (writer_.joinable()) {
    writer_.join();  // the writer drains the queue and records the clean close
    return;
  }
  std::lock_guard lk(mu_);
  if (!replayed_ || unusable_rc_ != 0) return;  // nothing changed since open
  try {
    uint64_t last = live_.empty() ? 0 : live_.back().seq;
    persist_trim_point(trim_point_locked(), true, tail_pos_ % cap_, last);
  } catch (const std::exception &e) {
    log_.log(STRATA_LOG_WARN, "%s: recording the clean close failed: %s",
             media_->name().c_str(), e.what());
  }
}

void CircularLog::claim(const JournalOwner &owner) {
  if (owner.id.empty()) return;
  const std::string id = owner.id.substr(0, kOwnerIdMax);
  if (sb_.owner_id.empty()) {
    // Adopt: whoever opens a journal made before owners existed is the store
    // that has been using it (its identity file names this journal); from
    // now on a copy of that store with another fsid is refused.
    Superblock next = sb_;
    next.owner_id = id;
    next.owner_path = owner.path.substr(0, kOwnerPathMax);
    store_superblock(*media_, next);
    sb_ = next;
    log_.log(STRATA_LOG_INFO, "%s: journal recorded no owner; now owned by store %s (%s)",
             media_->name().c_str(), id.c_str(), owner.path.c_str());
    return;
  }
  if (sb_.owner_id != id)
    throw make_error(EXDEV,
                     "journal %s belongs to store %s (at %s), not to store %s (at %s); refusing "
                     "to open another store's journal (a copied store must use its own copy of "
                     "the journal, see README 'Copying or moving a store')",
                     media_->name().c_str(), sb_.owner_id.c_str(), sb_.owner_path.c_str(),
                     id.c_str(), owner.path.c_str());
  if (!owner.path.empty() && sb_.owner_path != owner.path.substr(0, kOwnerPathMax))
    log_.log(STRATA_LOG_WARN,
             "%s: journal of store %s was made for it at %s, now opened from %s (moved? a copy "
             "that shares the original's journal would take its records)",
             media_->name().c_str(), id.c_str(), sb_.owner_path.c_str(), owner.path.c_str());
}

// --- replay -----------------------------------------------------------------

strata_journal_replay_result CircularLog::replay(uint64_t after_seq,
                                                 const RecordVisitor &visit) {
  std::lock_guard append_lk(append_mu_);
  return replay_holding_append_mu(after_seq, visit);
}

strata_journal_replay_result CircularLog::replay_holding_append_mu(uint64_t after_seq,
                                                                   const RecordVisitor &visit) {
  {
    std::lock_guard lk(mu_);
    if (appended_)
      throw make_error(EINVAL, "%s: replay after appends (replay comes once, right after open)",
                       media_->name().c_str());
    if (unusable_rc_ == -EUCLEAN) throw sdk::Error(unusable_rc_, unusable_msg_);
  }
  ScanResult scan;
  uint64_t newest_on_corruption = 0;
  try {
    scan = scan_log(*media_, sb_, after_seq, visit, &newest_on_corruption);
  } catch (const sdk::Error &e) {
    if (e.code() == -EUCLEAN) {
      std::lock_guard lk(mu_);
      if (newest_on_corruption) last_seq_ = newest_on_corruption;
      unusable_rc_ = e.code();
      unusable_msg_ = e.what();
      log_.log(STRATA_LOG_ERROR, "%s", e.what());
    }
    throw;
  }

  // A new epoch before the first append: records this run writes can never
  // be chained behind whatever an earlier run left beyond the tail.
  Superblock next = sb_;
  ++next.epoch;
  next.clean = false;
  store_superblock(*media_, next);
  sb_ = next;

  std::lock_guard lk(mu_);
  session_epoch_ = sb_.epoch;
  live_ = std::move(scan.records);
  trim_pos_ = scan.start_pos;
  tail_pos_ = scan.tail_pos;
  persisted_trim_pos_ = scan.start_pos;
  last_persist_ = Clock::now();
  if (!live_.empty())
    last_seq_ = live_.back().seq;
  else if (sb_.trim_seq > 0)
    last_seq_ = sb_.trim_seq - 1;  // everything below the trim point was held once
  durable_seq_ = last_seq_.value_or(0);
  replayed_ = true;
  apply_trim_locked();

  strata_journal_replay_result res{};
  res.struct_size = sizeof res;
  res.records = scan.visited;
  res.last_seq = std::max(scan.last_seq.value_or(0), after_seq);
  res.torn_bytes = scan.torn_bytes;
  std::string detail = scan.detail;
  if (!scan.notes.empty()) detail += (detail.empty() ? "" : "; ") + scan.notes;
  std::snprintf(res.detail, sizeof res.detail, "%s", detail.c_str());
  if (!scan.notes.empty())
    log_.log(STRATA_LOG_WARN, "%s: %s", media_->name().c_str(), scan.notes.c_str());
  if (scan.torn_bytes > 0)
    log_.log(STRATA_LOG_WARN, "%s: %s", media_->name().c_str(), scan.detail.c_str());
  log_.log(STRATA_LOG_INFO,
           "%s: replayed %" PRIu64 " records after seq %" PRIu64 "; log holds %zu records (%" PRIu64
           " of %" PRIu64 " bytes), epoch %" PRIu64,
           media_->name().c_str(), scan.visited, after_seq, live_.size(), tail_pos_ - trim_pos_,
           cap_, session_epoch_);
  return res;
}

// --- append / trim / flush / stat -------------------------------------------

void CircularLog::throw_if_unusable_locked() const {
  if (unusable_rc_ == -EUCLEAN)
    throw make_error(EUCLEAN, "journal refuses appends: %s", unusable_msg_.c_str());
  if (unusable_rc_ != 0)
    throw make_error(unusable_rc_, "journal refuses appends after a failed write: %s",
                     unusable_msg_.c_str());
  if (stopping_) throw make_error(ESHUTDOWN, "%s: journal is closing", media_->name().c_str());
}

void CircularLog::append(uint64_t seq, const void *data, size_t len,
                         strata_journal_done_cb done, void *arg) {
  const uint64_t footprint = record_footprint(len, bs_);
  if (len > cap_ || footprint > cap_)
    throw make_error(EFBIG,
                     "%s: record seq %" PRIu64 " of %zu bytes (%" PRIu64
                     " with framing) exceeds the journal's capacity of %" PRIu64 " bytes",
                     media_->name().c_str(), seq, len, footprint, cap_);
  if (len > 0 && !data)
    throw make_error(EINVAL, "%s: record seq %" PRIu64 " has no data", media_->name().c_str(),
                     seq);
  // Copy and checksum before taking any lock.
  Pending p{};
  p.seq = seq;
  p.footprint = footprint;
  p.len = len;
  p.payload.reset(new uint8_t[len > 0 ? len : 1]);
  if (len > 0) std::memcpy(p.payload.get(), data, len);
  p.crc = crc32c(p.payload.get(), len);
  p.done = done;
  p.arg = arg;

  std::lock_guard append_lk(append_mu_);
  bool need_replay;
  {
    std::lock_guard lk(mu_);
    throw_if_unusable_locked();
    need_replay = !replayed_;
  }
  if (need_replay) replay_holding_append_mu(0, [](uint64_t, const void *, size_t) { return 0; });

  std::unique_lock lk(mu_);
  throw_if_unusable_locked();
  if (seq == 0)
    throw make_error(EINVAL, "%s: journal seqs start at 1", media_->name().c_str());
  if (last_seq_ && seq <= *last_seq_)
    throw make_error(EINVAL, "%s: append of seq %" PRIu64 " after seq %" PRIu64
                     " (seqs must increase)", media_->name().c_str(), seq, *last_seq_);
  if (appended_ && seq != *last_seq_ + 1)
    throw make_error(EINVAL, "%s: append of seq %" PRIu64 " after seq %" PRIu64
                     " (only the first append after open may skip seqs)",
                     media_->name().c_str(), seq, *last_seq_);

  // Find the record's place, waiting for trims while the ring is full.
  uint64_t start, end;
  for (;;) {
    const uint64_t pos = tail_pos_;
    const uint64_t off = pos % cap_;
    const bool wraps = off + footprint > cap_;
    p.pad_pos = pos;
    p.rec_pos = wraps ? pos + (cap_ - off) : pos;
    end = p.rec_pos + footprint;
    if (live_.empty()) {
      // Nothing is live: the record may start the next lap at once, and the
      // free room starts where it does. Instead of a pad (which the record
      // could overlap), the trim point moves to the record first.
      p.moves_trim_point = wraps;
      if (wraps) p.pad_pos = p.rec_pos;
      start = p.rec_pos;
      trim_pos_ = std::max(trim_pos_, start);
      break;
    }
    p.moves_trim_point = false;
    start = pos;
    if (end <= trim_pos_ + cap_) break;
    room_cv_.wait(lk);
    throw_if_unusable_locked();
  }
  live_.push_back({seq, session_epoch_, start, end});
  tail_pos_ = end;
  last_seq_ = seq;
  appended_ = true;
  ++records_written_;
  queue_.push_back(std::move(p));
  if (!writer_.joinable())
    writer_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "journal-writer");
      writer_main();
    });
  lk.unlock();
  work_cv_.notify_one();
}

void CircularLog::apply_trim_locked() {
  bool freed = false;
  while (!live_.empty() && live_.front().seq <= trim_target_ &&
         live_.front().seq <= durable_seq_) {
    trim_pos_ = live_.front().end;
    live_.pop_front();
    freed = true;
  }
  if (freed) {
    room_cv_.notify_all();
    work_cv_.notify_one();  // the writer schedules persisting the trim point
  }
}

void CircularLog::trim(uint64_t upto_seq) {
  std::lock_guard lk(mu_);
  trim_target_ = std::max(trim_target_, upto_seq);
  apply_trim_locked();
}

void CircularLog::flush() {
  std::unique_lock lk(mu_);
  if (!appended_) return;
  const uint64_t target = *last_seq_;
  durable_cv_.wait(lk, [&] { return durable_seq_ >= target || unusable_rc_ != 0; });
  if (durable_seq_ < target)
    throw make_error(unusable_rc_, "%s: flush failed: %s", media_->name().c_str(),
                     unusable_msg_.c_str());
}

strata_journal_stat CircularLog::stat() {
  std::lock_guard lk(mu_);
  strata_journal_stat s{};
  s.struct_size = sizeof s;
  s.capacity_bytes = cap_;
  s.used_bytes = tail_pos_ - trim_pos_;
  s.first_seq = live_.empty() ? 0 : live_.front().seq;
  s.last_seq = last_seq_.value_or(0);
  s.durable_seq = durable_seq_;
  s.device_writes = device_writes_;
  s.records_written = records_written_;
  return s;
}

// --- the writer thread ------------------------------------------------------

CircularLog::TrimPoint CircularLog::trim_point_locked() const {
  if (!live_.empty()) return {trim_pos_, live_.front().seq, live_.front().epoch};
  // An empty log: whatever comes next has a higher seq and this run's epoch.
  return {trim_pos_, last_seq_ ? *last_seq_ + 1 : 0, session_epoch_};
}

void CircularLog::persist_trim_point(const TrimPoint &tp, bool clean, uint64_t clean_tail,
                                     uint64_t clean_last_seq) {
  Superblock next = sb_;
  next.trim_offset = tp.pos % cap_;
  next.trim_seq = tp.seq;
  next.trim_epoch = tp.epoch;
  next.clean = clean;
  next.clean_tail_offset = clean ? clean_tail : 0;
  next.clean_last_seq = clean ? clean_last_seq : 0;
  store_superblock(*media_, next);
  sb_ = next;
}

void CircularLog::writer_main() {
  std::vector<Pending> batch;
  for (;;) {
    bool persist = false;
    TrimPoint tp{};
    uint64_t durable_below = 0;
    {
      std::unique_lock lk(mu_);
      const auto persist_due = [&] {
        return trim_point_dirty_locked() &&
               Clock::now() >= last_persist_ + options_.trim_persist_interval;
      };
      while (queue_.empty() && !stopping_ && !persist_due()) {
        if (trim_point_dirty_locked())
          work_cv_.wait_until(lk, last_persist_ + options_.trim_persist_interval);
        else
          work_cv_.wait(lk);
      }
      if (queue_.empty() && stopping_) break;

      uint64_t bytes = 0;
      while (!queue_.empty()) {
        const Pending &next = queue_.front();
        uint64_t b = next.footprint + (next.pad_pos != next.rec_pos ? bs_ : 0);
        if (!batch.empty() && bytes + b > options_.max_batch_bytes) break;
        bytes += b;
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      // Persist the trim point before the batch when the batch reuses room
      // the superblock still counts as live, or when it is merely due.
      const bool reuses_live_room =
          !batch.empty() &&
          batch.back().rec_pos + batch.back().footprint > persisted_trim_pos_ + cap_;
      persist = reuses_live_room || persist_due() ||
                (!batch.empty() && batch.front().moves_trim_point);
      tp = trim_point_locked();
      durable_below = durable_seq_ + 1;
    }

    size_t runs = 0;
    try {
      if (persist) {
        persist_trim_point(tp, false, 0, 0);
        std::lock_guard lk(mu_);
        persisted_trim_pos_ = tp.pos;
        last_persist_ = Clock::now();
      }
      if (!batch.empty()) runs = write_batch(batch, durable_below);
    } catch (const sdk::Error &e) {
      fail_everything(batch, e.code(), e.what());
      return;
    } catch (const std::exception &e) {
      fail_everything(batch, -EIO, e.what());
      return;
    }
    if (batch.empty()) continue;

    {
      std::lock_guard lk(mu_);
      durable_seq_ = batch.back().seq;
      device_writes_ += runs;
      apply_trim_locked();
    }
    durable_cv_.notify_all();
    for (const Pending &p : batch)
      if (p.done) p.done(p.arg, 0);
    batch.clear();
  }

  // Drained and closing: record where the log ends.
  std::lock_guard lk(mu_);
  try {
    uint64_t last = live_.empty() ? 0 : live_.back().seq;
    persist_trim_point(trim_point_locked(), true, tail_pos_ % cap_, last);
  } catch (const std::exception &e) {
    log_.log(STRATA_LOG_WARN, "%s: recording the clean close failed: %s",
             media_->name().c_str(), e.what());
  }
}

size_t CircularLog::write_batch(const std::vector<Pending> &batch, uint64_t durable_below) {
  // Segments in ring order: [pad header block], record, [pad], record, ...
  struct Segment {
    uint64_t pos;
    uint64_t len;
    const Pending *rec;
    bool is_pad;
  };
  std::vector<Segment> segs;
  segs.reserve(batch.size() + 2);
  uint64_t total = 0;
  for (const Pending &p : batch) {
    if (p.pad_pos != p.rec_pos) segs.push_back({p.pad_pos, bs_, &p, true});
    segs.push_back({p.rec_pos, p.footprint, &p, false});
  }
  for (const Segment &s : segs) total += s.len;
  batch_buf_.ensure(total, std::max<uint32_t>(bs_, media_->alignment()));

  std::vector<WriteRun> runs;
  uint8_t *out = batch_buf_.data();
  uint64_t run_end = 0;
  for (const Segment &s : segs) {
    RecordHeader h;
    h.journal_id = journal_id_;
    h.epoch = session_epoch_;
    h.seq = s.rec->seq;
    h.durable_below = durable_below;
    if (s.is_pad) {
      h.type = RecordType::kPad;
      encode_record_header(h, out);
      std::memset(out + kRecordHeaderSize, 0, s.len - kRecordHeaderSize);
    } else {
      h.type = RecordType::kData;
      h.payload_len = s.rec->len;
      h.payload_crc = s.rec->crc;
      encode_record_header(h, out);
      std::memcpy(out + kRecordHeaderSize, s.rec->payload.get(), s.rec->len);
      std::memset(out + kRecordHeaderSize + s.rec->len, 0,
                  s.len - kRecordHeaderSize - s.rec->len);
    }
    // A segment continues the run when it follows it in the ring without
    // crossing the ring's end.
    const uint64_t off = s.pos % cap_;
    if (!runs.empty() && s.pos == run_end && off != 0)
      runs.back().len += s.len;
    else
      runs.push_back({sb_.ring_offset + off, out, s.len});
    run_end = s.pos + s.len;
    out += s.len;
  }
  media_->write_durable(runs);
  return runs.size();
}

void CircularLog::fail_everything(std::vector<Pending> &batch, int rc, const std::string &msg) {
  log_.log(STRATA_LOG_ERROR, "%s: journal write failed, failing every queued append: %s",
           media_->name().c_str(), msg.c_str());
  std::deque<Pending> queued;
  {
    std::lock_guard lk(mu_);
    unusable_rc_ = rc < 0 ? rc : -EIO;
    unusable_msg_ = msg;
    queued.swap(queue_);
  }
  durable_cv_.notify_all();
  room_cv_.notify_all();
  for (const Pending &p : batch)
    if (p.done) p.done(p.arg, rc);
  for (const Pending &p : queued)
    if (p.done) p.done(p.arg, rc);
  batch.clear();
}

}  // namespace strata::journal
