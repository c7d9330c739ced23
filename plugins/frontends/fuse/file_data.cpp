// FileData over the client table: see file_data.h. The pieces: ExtentMap
// (buffers), AioBatch (parallel object I/O), FileState (one file's state).
#include "file_data.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data_aio.h"
#include "data_file_state.h"
#include "data_objects.h"

namespace strata::fuse {

namespace {

constexpr uint64_t kMinReadahead = 128u << 10;

class FileDataImpl final : public FileData {
 public:
  FileDataImpl(const strata_client_api *api, strata_cluster_t cluster, FileDataOptions opts)
      : api_(api), cluster_(cluster), opts_(opts) {
    if (opts_.max_inflight_ops == 0) opts_.max_inflight_ops = 1;
    if (opts_.writeback_bytes_per_file == 0) opts_.writeback_bytes_per_file = 1;
  }

  ~FileDataImpl() override {
    flush_all();
    tracker_.wait_idle();
    for (auto &[pool, io] : ioctxs_) api_->ioctx_destroy(io);
  }

  int64_t read(const FileLayout &f, uint64_t size, uint64_t off, size_t len, char *out) override;
  int64_t write(const FileLayout &f, uint64_t off, const char *buf, size_t len) override;
  int flush(const FileLayout &f) override;
  int truncate(const FileLayout &f, uint64_t old_size, uint64_t new_size) override;
  int zero(const FileLayout &f, uint64_t off, uint64_t len) override;
  int64_t allocated_blocks(const FileLayout &f, uint64_t size) override;
  InlineOutcome settle_inline(const FileLayout &f, uint64_t size, uint64_t max,
                              std::string *bytes) override;
  void invalidate(uint64_t ino) override;
  void forget(uint64_t ino) override;
  bool forget_if_idle(uint64_t ino) override;
  int flush_all() override;
  bool discard(uint64_t ino) override;
  uint64_t buffered_bytes() const override { return total_pending_.load(); }
  FileDataStats stats() const override;

 private:
  using StatePtr = std::shared_ptr<FileState>;

  // The ioctx of a pool, made once (a synchronous call: never from a
  // completion callback).
  int ioctx_for(int64_t pool, strata_ioctx_t *out);
  StatePtr state_of(uint64_t ino, bool create);
  // The file's state with its layout and ioctx set; -errno if the pool
  // can't be reached.
  int open_state(const FileLayout &f, StatePtr *out);
  int check_layout(const FileLayout &f) const;

  // Moves st's dirty extents into `writing` and returns the batch that
  // writes them out, to start once st.m is released; null when nothing
  // may start now. Called with st.m held. An inline file's bytes are
  // written out only under buffer pressure (it has outgrown being
  // inline); a flush leaves them for settle_inline.
  std::shared_ptr<AioBatch> prepare_writeout(const StatePtr &st, bool pressure);
  // Where a state's bytes are, from the caller's layout, the first time
  // it is used (or after an invalidation): under st.m, by every op, so that
  // an invalidation between open_state and the op cannot go unseen.
  static void decide_inline(FileState &st, const FileLayout &f);
  // The file's state, made if need be, locked and decided; never one that
  // forget() dropped from the map meanwhile (an op on it would be lost).
  // *rc: 0 or -errno (then nothing is locked).
  std::unique_lock<std::mutex> lock_state(const FileLayout &f, StatePtr *st, int *rc);
  // An inline file becomes a file in objects: its inline bytes join its
  // dirty ones (st.m held).
  void leave_inline(FileState &st);
  // The bytes of an inline file: base, then dirty over it (st.m held).
  static std::string inline_bytes(const FileState &st);
  void writeout_done(const StatePtr &st, AioBatch &b);
  bool over_total() const { return total_pending_.load() > opts_.writeback_bytes_total; }
  // Adds the change of st.dirty's size since `before` to the totals.
  void account_dirty(FileState &st, size_t before);
  void release_pending(FileState &st, size_t bytes);

  int flush_state(const StatePtr &st);
  // Sets st.exclusive once no write-out runs (objects then hold every
  // write not in `dirty`); end_exclusive clears it.
  void begin_exclusive(FileState &st, std::unique_lock<std::mutex> &lk);
  void end_exclusive(const StatePtr &st);

  // Reads [off, off+len) of the objects into out: holes and missing
  // objects as zeros. 0 or -errno.
  int read_objects(const FileState &st, uint64_t off, uint64_t len, char *out);
  // Starts reading ahead after a sequential read, with st.m held; returns
  // the batch to start once it is released (or null).
  std::shared_ptr<AioBatch> prepare_prefetch(const StatePtr &st, uint64_t size);
  size_t clean_cap() const {
    return std::max<size_t>(2 * opts_.readahead_max_bytes, kMinReadahead);
  }

  std::shared_ptr<AioBatch> new_batch(AioBatch::DoneHook on_done = nullptr) {
    return std::make_shared<AioBatch>(api_, opts_.max_inflight_ops, &tracker_, std::move(on_done));
  }
  ObjectOp object_op(ObjectOp::Kind kind, const FileState &st, uint64_t objno) const {
    ObjectOp o;
    o.kind = kind;
    o.io = st.io;
    o.oid = data_object_name(st.layout.ino, objno);
    return o;
  }
  void count_ops(const AioBatch &b);

  const strata_client_api *api_;
  strata_cluster_t cluster_;
  FileDataOptions opts_;
  BatchTracker tracker_;

  std::mutex ioctx_m_;
  std::unordered_map<int64_t, strata_ioctx_t> ioctxs_;

  mutable std::mutex files_m_;
  std::unordered_map<uint64_t, StatePtr> files_;

  // Writers wait here while every buffer together is past its bound.
  std::mutex total_m_;
  std::condition_variable total_cv_;
  std::atomic<uint64_t> total_pending_{0};

  struct Counters {
    std::atomic<uint64_t> object_writes{0}, object_reads{0}, object_removes{0};
    std::atomic<uint64_t> bytes_written{0}, bytes_read{0}, readahead_hits{0};
    std::atomic<uint64_t> object_errors{0};
  } counters_;
  // on_error's rate limit: reports in the current second, failures not told.
  std::mutex report_m_;
  int64_t report_second_ = -1;
  int reports_ = 0;
  uint64_t untold_ = 0;
  void report_failure(const ObjectOp &o);
};

int FileDataImpl::check_layout(const FileLayout &f) const {
  if (f.pool < 0 || f.object_size == 0) return -EINVAL;
  return 0;
}

int FileDataImpl::ioctx_for(int64_t pool, strata_ioctx_t *out) {
  std::lock_guard lk(ioctx_m_);
  auto it = ioctxs_.find(pool);
  if (it != ioctxs_.end()) {
    *out = it->second;
    return 0;
  }
  strata_ioctx_t io = nullptr;
  int rc = api_->ioctx_create_by_id(cluster_, pool, &io);
  if (rc < 0) return rc;
  ioctxs_.emplace(pool, io);
  *out = io;
  return 0;
}

FileDataImpl::StatePtr FileDataImpl::state_of(uint64_t ino, bool create) {
  std::lock_guard lk(files_m_);
  auto it = files_.find(ino);
  if (it != files_.end()) return it->second;
  if (!create) return nullptr;
  auto st = std::make_shared<FileState>();
  files_.emplace(ino, st);
  return st;
}

int FileDataImpl::open_state(const FileLayout &f, StatePtr *out) {
  if (int rc = check_layout(f)) return rc;
  strata_ioctx_t io = nullptr;
  if (int rc = ioctx_for(f.pool, &io)) return rc;
  StatePtr st = state_of(f.ino, true);
  {
    std::lock_guard lk(st->m);
    st->layout = f;
    st->io = io;
  }
  *out = std::move(st);
  return 0;
}

const char *op_name(ObjectOp::Kind k) {
  switch (k) {
    case ObjectOp::Kind::kWrite:
      return "write";
    case ObjectOp::Kind::kRead:
      return "read";
    case ObjectOp::Kind::kStat:
      return "stat";
    case ObjectOp::Kind::kRemove:
      return "remove";
    case ObjectOp::Kind::kTruncate:
      return "truncate";
    case ObjectOp::Kind::kZero:
      return "zero";
  }
  return "op";
}

// A failure the caller turns into an errno for one system call is also
// worth a line in the log: an EIO from close(2) says nothing of which
// object or why.
void FileDataImpl::report_failure(const ObjectOp &o) {
  counters_.object_errors++;
  if (!opts_.on_error) return;
  const int64_t second = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
  uint64_t untold = 0;
  {
    std::lock_guard lk(report_m_);
    if (second != report_second_) report_second_ = second, reports_ = 0;
    if (reports_ >= 3) {
      untold_++;
      return;
    }
    reports_++;
    untold = std::exchange(untold_, 0);
  }
  std::string line = std::string("object ") + op_name(o.kind) + " of " + o.oid +
                     " failed: " + std::strerror(int(-o.rc));
  if (!o.failure.empty()) line += " (" + o.failure + ")";
  if (untold) line += "; " + std::to_string(untold) + " more failures since the last report";
  opts_.on_error(line);
}

void FileDataImpl::count_ops(const AioBatch &b) {
  for (const ObjectOp &o : b.ops) {
    if (o.rc < 0) {
      if (o.rc != -ENOENT) report_failure(o);
      continue;
    }
    switch (o.kind) {
      case ObjectOp::Kind::kWrite:
        counters_.object_writes++;
        counters_.bytes_written += o.len;
        break;
      case ObjectOp::Kind::kRead:
        counters_.object_reads++;
        counters_.bytes_read += static_cast<uint64_t>(o.rc);
        break;
      case ObjectOp::Kind::kRemove:
        counters_.object_removes++;
        break;
      default:
        break;
    }
  }
}

// ---- writeback ----

void FileDataImpl::account_dirty(FileState &st, size_t before) {
  const size_t after = st.dirty.bytes();
  if (after >= before) {
    st.pending_bytes += after - before;
    total_pending_ += after - before;
  } else {
    release_pending(st, before - after);
  }
}

void FileDataImpl::release_pending(FileState &st, size_t bytes) {
  st.pending_bytes -= bytes;
  std::lock_guard lk(total_m_);
  total_pending_ -= bytes;
  total_cv_.notify_all();
}

std::unique_lock<std::mutex> FileDataImpl::lock_state(const FileLayout &f, StatePtr *st, int *rc) {
  for (;;) {
    if ((*rc = open_state(f, st)) != 0) return {};
    std::unique_lock lk((*st)->m);
    if (!(*st)->erased) {
      decide_inline(**st, f);
      return lk;
    }
  }
}

void FileDataImpl::decide_inline(FileState &st, const FileLayout &f) {
  if (st.inline_decided) return;
  st.inline_decided = true;
  st.objects_absent = f.inline_data != nullptr;
  if (f.inline_data) st.base = *f.inline_data;
}

void FileDataImpl::leave_inline(FileState &st) {
  if (!st.objects_absent) return;
  ExtentMap all;
  if (!st.base.empty()) all.insert(0, st.base.data(), st.base.size());
  for (const auto &[off, data] : st.dirty.extents()) all.insert(off, data.data(), data.size());
  const size_t before = st.dirty.bytes();
  st.dirty = std::move(all);
  account_dirty(st, before);
  st.base.clear();
  st.base.shrink_to_fit();
  st.objects_absent = false;
  st.left_inline = true;
}

std::string FileDataImpl::inline_bytes(const FileState &st) {
  std::string out = st.base;
  for (const auto &[off, data] : st.dirty.extents()) {
    if (off + data.size() > out.size()) out.resize(off + data.size(), '\0');
    std::memcpy(out.data() + off, data.data(), data.size());
  }
  return out;
}

std::shared_ptr<AioBatch> FileDataImpl::prepare_writeout(const StatePtr &st, bool pressure) {
  if (st->writeout_active || st->exclusive || st->dirty.empty()) return nullptr;
  if (st->objects_absent) {
    if (!pressure) return nullptr;
    leave_inline(*st);
  }
  st->writing = std::move(st->dirty);
  st->dirty.clear();
  st->writeout_active = true;
  st->objects_touched = true;
  auto batch = new_batch([this, st](AioBatch &b) { writeout_done(st, b); });
  const uint32_t os = st->layout.object_size;
  for (const auto &[off, data] : st->writing.extents()) {
    for (const ObjectPiece &p : split_by_object(off, data.size(), os)) {
      ObjectOp o = object_op(ObjectOp::Kind::kWrite, *st, p.objno);
      o.wbuf = data.data() + (p.file_off - off);
      o.off = p.obj_off;
      o.len = p.len;
      batch->ops.push_back(std::move(o));
    }
  }
  return batch;
}

// Runs on the thread that finished the last write of the batch (often a
// client library thread): no synchronous calls here.
void FileDataImpl::writeout_done(const StatePtr &st, AioBatch &b) {
  count_ops(b);
  std::shared_ptr<AioBatch> next;
  {
    std::lock_guard lk(st->m);
    if (int rc = b.first_error(false); rc < 0 && st->error == 0) st->error = rc;
    // The objects changed under any clean copy of these ranges.
    for (const auto &[off, data] : st->writing.extents()) st->clean.erase(off, data.size());
    st->clean_gen++;
    const size_t written = st->writing.bytes();
    st->writing.clear();
    st->writeout_active = false;
    release_pending(*st, written);
    if (st->dirty.bytes() >= opts_.writeback_bytes_per_file || over_total())
      next = prepare_writeout(st, true);
    st->cv.notify_all();
  }
  if (next) next->start();
}

int64_t FileDataImpl::write(const FileLayout &f, uint64_t off, const char *buf, size_t len) {
  if (len == 0) return 0;
  if (!buf || off + len < off) return -EINVAL;
  StatePtr st;
  int rc = 0;
  std::shared_ptr<AioBatch> batch;
  {
    auto lk = lock_state(f, &st, &rc);
    if (rc) return rc;
    // A full pool stops writers at once instead of filling the buffer; the
    // error stays to be reported by flush.
    if (st->error == -ENOSPC || st->error == -EDQUOT) return st->error;
    const size_t before = st->dirty.bytes();
    st->dirty.insert(off, buf, len);
    account_dirty(*st, before);
    if (off <= st->dense) st->dense = std::max<uint64_t>(st->dense, off + len);
    if (st->objects_absent) st->inline_changed = true;
    st->clean.erase(off, len);
    st->clean_gen++;
    if (st->dirty.bytes() >= opts_.writeback_bytes_per_file || over_total())
      batch = prepare_writeout(st, true);
  }
  if (batch) batch->start();
  if (over_total()) {
    // Past the bound for all buffers: wait until some are written out, or
    // at least this file's own (its write-outs chain while over the bound).
    std::unique_lock lk(total_m_);
    total_cv_.wait(lk, [&] { return !over_total() || st->pending_bytes.load() == 0; });
  }
  return static_cast<int64_t>(len);
}

int FileDataImpl::flush_state(const StatePtr &st) {
  std::unique_lock lk(st->m);
  for (;;) {
    st->cv.wait(lk, [&] { return !st->writeout_active && !st->exclusive; });
    if (st->dirty.empty()) break;
    auto batch = prepare_writeout(st, false);
    if (!batch) break;  // inline bytes: settle_inline's to report
    lk.unlock();
    batch->start();
    lk.lock();
  }
  const int rc = st->error;
  st->error = 0;
  return rc;
}

int FileDataImpl::flush(const FileLayout &f) {
  StatePtr st = state_of(f.ino, false);
  return st ? flush_state(st) : 0;
}

int FileDataImpl::flush_all() {
  std::vector<StatePtr> all;
  {
    std::lock_guard lk(files_m_);
    for (auto &[ino, st] : files_) all.push_back(st);
  }
  int first = 0;
  for (const StatePtr &st : all)
    if (int rc = flush_state(st); rc < 0 && first == 0) first = rc;
  return first;
}

void FileDataImpl::forget(uint64_t ino) {
  StatePtr st = state_of(ino, false);
  if (!st) return;
  flush_state(st);  // close already reported errors through flush
  std::lock_guard flk(files_m_);
  std::lock_guard lk(st->m);
  if (st->dirty.empty() && !st->writeout_active && !st->exclusive && st->error == 0 &&
      !st->prefetch_active && !st->inline_changed && !st->left_inline) {
    files_.erase(ino);
    st->erased = true;  // an op that took it before this looks again (lock_state)
  }
}

bool FileDataImpl::forget_if_idle(uint64_t ino) {
  StatePtr st = state_of(ino, false);
  if (!st) return true;
  std::lock_guard flk(files_m_);
  std::lock_guard lk(st->m);
  if (st->erased) return true;
  if (!st->dirty.empty() || st->writeout_active || st->exclusive || st->error != 0 ||
      st->prefetch_active || st->inline_changed || st->left_inline)
    return false;
  if (auto it = files_.find(ino); it != files_.end() && it->second == st) files_.erase(it);
  st->erased = true;
  return true;
}

bool FileDataImpl::discard(uint64_t ino) {
  StatePtr st = state_of(ino, false);
  if (!st) return true;  // nothing buffered: forget() only drops a flushed state
  std::lock_guard flk(files_m_);
  std::lock_guard lk(st->m);
  if (st->erased) return true;  // forget() dropped it meanwhile
  if (st->objects_touched || st->writeout_active || st->exclusive || st->prefetch_active)
    return false;
  release_pending(*st, st->dirty.bytes());
  st->dirty.clear();
  st->base.clear();
  if (auto it = files_.find(ino); it != files_.end() && it->second == st) files_.erase(it);
  st->erased = true;  // an op that took it before this looks again (lock_state)
  return true;
}

// ---- truncate and zero ----

void FileDataImpl::begin_exclusive(FileState &st, std::unique_lock<std::mutex> &lk) {
  st.cv.wait(lk, [&] { return !st.writeout_active && !st.exclusive; });
  st.exclusive = true;
  st.objects_touched = true;
}

void FileDataImpl::end_exclusive(const StatePtr &st) {
  std::shared_ptr<AioBatch> batch;
  {
    std::lock_guard lk(st->m);
    st->exclusive = false;
    // Writers that came meanwhile could not start their write-out.
    if (st->dirty.bytes() >= opts_.writeback_bytes_per_file || over_total())
      batch = prepare_writeout(st, true);
    st->cv.notify_all();
  }
  if (batch) batch->start();
}

int FileDataImpl::truncate(const FileLayout &f, uint64_t old_size, uint64_t new_size) {
  StatePtr st;
  int rc = 0;
  {
    auto lk = lock_state(f, &st, &rc);
    if (rc) return rc;
    if (st->objects_absent) {
      // Inline: no object to touch (and no write-out runs for it).
      const size_t before = st->dirty.bytes();
      st->dirty.truncate(new_size);
      account_dirty(*st, before);
      if (st->base.size() > new_size) st->base.resize(new_size);
      st->clean.truncate(new_size);
      st->clean_gen++;
      st->inline_changed = true;
      return 0;
    }
    begin_exclusive(*st, lk);
    const size_t before = st->dirty.bytes();
    st->dirty.truncate(new_size);
    account_dirty(*st, before);
    st->dense = std::min(st->dense, new_size);
    st->clean.truncate(new_size);
    st->clean_gen++;
    st->ra_next = std::min(st->ra_next, new_size);
  }
  if (new_size < old_size) {
    const uint32_t os = f.object_size;
    auto batch = new_batch();
    for (uint64_t n = objects_for(new_size, os); n < objects_for(old_size, os); ++n)
      batch->ops.push_back(object_op(ObjectOp::Kind::kRemove, *st, n));
    if (new_size % os != 0) {
      ObjectOp o = object_op(ObjectOp::Kind::kTruncate, *st, new_size / os);
      o.len = new_size % os;
      batch->ops.push_back(std::move(o));
    }
    batch->start();
    batch->wait();
    count_ops(*batch);
    rc = batch->first_error(true);
  }
  end_exclusive(st);
  return rc;
}

int FileDataImpl::zero(const FileLayout &f, uint64_t off, uint64_t len) {
  if (len == 0) return 0;
  if (off + len < off) return -EINVAL;
  StatePtr st;
  int rc = 0;
  {
    auto lk = lock_state(f, &st, &rc);
    if (rc) return rc;
    if (st->objects_absent) {
      const size_t before = st->dirty.bytes();
      st->dirty.erase(off, len);
      account_dirty(*st, before);
      if (off < st->base.size())
        std::memset(st->base.data() + off, 0, std::min<uint64_t>(len, st->base.size() - off));
      st->inline_changed = true;
      return 0;
    }
    begin_exclusive(*st, lk);
    // Buffered bytes in the range would otherwise land over the zeros.
    const size_t before = st->dirty.bytes();
    st->dirty.erase(off, len);
    account_dirty(*st, before);
    st->dense = std::min(st->dense, off);
    st->clean.erase(off, len);
    st->clean_gen++;
  }
  auto batch = new_batch();
  for (const ObjectPiece &p : split_by_object(off, len, f.object_size)) {
    if (p.len == f.object_size) {
      batch->ops.push_back(object_op(ObjectOp::Kind::kRemove, *st, p.objno));
    } else {
      ObjectOp o = object_op(ObjectOp::Kind::kZero, *st, p.objno);
      o.off = p.obj_off;
      o.len = p.len;
      batch->ops.push_back(std::move(o));
    }
  }
  batch->start();
  batch->wait();
  count_ops(*batch);
  end_exclusive(st);
  return batch->first_error(true);
}

// ---- reads ----

int FileDataImpl::read_objects(const FileState &st, uint64_t off, uint64_t len, char *out) {
  auto batch = new_batch();
  for (const ObjectPiece &p : split_by_object(off, len, st.layout.object_size)) {
    ObjectOp o = object_op(ObjectOp::Kind::kRead, st, p.objno);
    o.rbuf = out + (p.file_off - off);
    o.off = p.obj_off;
    o.len = p.len;
    batch->ops.push_back(std::move(o));
  }
  batch->start();
  batch->wait();
  count_ops(*batch);
  if (int rc = batch->first_error(true)) return rc;
  for (const ObjectOp &o : batch->ops) {
    // Past the object's end, or no object at all: a hole.
    const uint64_t got = o.rc > 0 ? static_cast<uint64_t>(o.rc) : 0;
    if (got < o.len) std::memset(o.rbuf + got, 0, o.len - got);
  }
  return 0;
}

std::shared_ptr<AioBatch> FileDataImpl::prepare_prefetch(const StatePtr &st, uint64_t size) {
  const uint64_t reader = st->last_end;
  if (st->prefetch_active || st->window == 0 || st->exclusive) return nullptr;
  st->ra_next = std::max(st->ra_next, reader);
  const uint64_t want_end = std::min(size, reader + st->window);
  // Top the window up once the reader has used half of what lies ahead.
  if (st->ra_next >= want_end || st->ra_next - reader > st->window / 2) return nullptr;
  const uint64_t lo = st->ra_next, hi = want_end;
  st->prefetch_active = true;
  st->prefetch_lo = lo;
  st->prefetch_hi = hi;
  st->ra_next = hi;
  auto data = std::make_shared<std::string>(hi - lo, '\0');
  const uint64_t gen = st->clean_gen;
  auto batch = new_batch([this, st, data, lo, gen](AioBatch &b) {
    count_ops(b);
    std::lock_guard lk(st->m);
    st->prefetch_active = false;
    // A write, truncate or invalidation since the reads started may have
    // made this copy stale: drop it.
    if (b.first_error(true) == 0 && gen == st->clean_gen) {
      for (const ObjectOp &o : b.ops) {
        const uint64_t got = o.rc > 0 ? static_cast<uint64_t>(o.rc) : 0;
        if (got < o.len) std::memset(o.rbuf + got, 0, o.len - got);
      }
      st->clean.insert(lo, data->data(), data->size());
      st->clean.shrink_to(clean_cap());
    } else {
      st->ra_next = std::min(st->ra_next, lo);
    }
    st->cv.notify_all();
  });
  for (const ObjectPiece &p : split_by_object(lo, hi - lo, st->layout.object_size)) {
    ObjectOp o = object_op(ObjectOp::Kind::kRead, *st, p.objno);
    o.rbuf = data->data() + (p.file_off - lo);
    o.off = p.obj_off;
    o.len = p.len;
    batch->ops.push_back(std::move(o));
  }
  return batch;
}

int64_t FileDataImpl::read(const FileLayout &f, uint64_t size, uint64_t off, size_t len,
                           char *out) {
  if (off >= size || len == 0) return 0;
  if (!out) return -EINVAL;
  len = static_cast<size_t>(std::min<uint64_t>(len, size - off));
  const uint64_t end = off + len;
  StatePtr st;
  int rc = 0;

  ExtentMap buffered;  // this process's writes the objects may not hold yet
  bool hit = false;
  std::shared_ptr<AioBatch> prefetch;
  {
    auto lk = lock_state(f, &st, &rc);
    if (rc) return rc;
    if (st->objects_absent) {
      std::memset(out, 0, len);
      if (off < st->base.size())
        std::memcpy(out, st->base.data() + off, std::min<uint64_t>(len, st->base.size() - off));
      st->dirty.overlay(off, len, out);
      return static_cast<int64_t>(len);
    }
    if (off == st->last_end && opts_.readahead_max_bytes > 0) {
      // Sequential: the window doubles from 128 KiB up to the maximum.
      const uint64_t cap = opts_.readahead_max_bytes;
      st->window = std::min(cap, std::max(st->window * 2, std::min(kMinReadahead, cap)));
    } else {
      st->window = 0;
      st->ra_next = 0;
    }
    st->last_end = end;
    // Data on its way from a prefetch: wait for it rather than read twice.
    st->cv.wait(lk, [&] {
      return !st->prefetch_active || st->prefetch_hi <= off || st->prefetch_lo >= end;
    });
    hit = st->clean.covers(off, len);
    if (hit) {
      st->clean.overlay(off, len, out);
      counters_.readahead_hits++;
    }
    buffered = st->writing.slice(off, len);
    ExtentMap newer = st->dirty.slice(off, len);
    for (const auto &[o, d] : newer.extents()) buffered.insert(o, d.data(), d.size());
    if (!hit && st->window > 0) st->ra_next = std::max(st->ra_next, end);
    prefetch = prepare_prefetch(st, size);
  }
  if (prefetch) prefetch->start();
  if (!hit) {
    if (int rc = read_objects(*st, off, len, out)) return rc;
  }
  buffered.overlay(off, len, out);
  return static_cast<int64_t>(len);
}

InlineOutcome FileDataImpl::settle_inline(const FileLayout &f, uint64_t size, uint64_t max,
                                          std::string *bytes) {
  StatePtr st = state_of(f.ino, false);
  if (!st) return InlineOutcome::kUnchanged;  // nothing written since it was last settled
  std::lock_guard lk(st->m);
  if (st->objects_absent) {
    // Unchanged since it was last reported: still right where it is.
    if (!st->inline_changed) return InlineOutcome::kUnchanged;
    if (size <= max) {
      std::string all = inline_bytes(*st);
      if (all.size() > size) all.resize(size);
      // Trailing zeros read the same without being kept.
      const size_t keep = all.find_last_not_of('\0');
      all.resize(keep == std::string::npos ? 0 : keep + 1);
      const size_t before = st->dirty.bytes();
      st->dirty.clear();
      account_dirty(*st, before);
      st->base = all;
      st->inline_changed = false;
      *bytes = std::move(all);
      return InlineOutcome::kInline;
    }
    leave_inline(*st);
  }
  if (!st->left_inline) return InlineOutcome::kUnchanged;
  st->left_inline = false;
  st->inline_changed = false;
  return InlineOutcome::kObjects;
}

void FileDataImpl::invalidate(uint64_t ino) {
  StatePtr st = state_of(ino, false);
  if (!st) return;
  std::lock_guard lk(st->m);
  // Another client may have changed where the data is, too: decided anew
  // from the next caller's layout (nothing of ours is left to report).
  if (st->dirty.empty() && !st->writeout_active && !st->inline_changed && !st->left_inline) {
    st->inline_decided = st->objects_absent = false;
    st->base.clear();
  }
  st->clean.clear();
  st->clean_gen++;
  st->window = 0;
  st->ra_next = 0;
  st->last_end = 0;
}

// ---- sizes ----

int64_t FileDataImpl::allocated_blocks(const FileLayout &f, uint64_t size) {
  StatePtr st;
  int rc = 0;
  {
    auto lk = lock_state(f, &st, &rc);
    if (rc) return rc;
    if (st->objects_absent) {
      uint64_t end = st->base.size();
      if (!st->dirty.empty()) {
        const auto &last = *st->dirty.extents().rbegin();
        end = std::max<uint64_t>(end, last.first + last.second.size());
      }
      return int64_t((std::min(end, size) + 511) / 512);
    }
    if (size <= st->dense) return int64_t((size + 4095) / 4096 * 8);  // 4 KiB blocks
  }
  auto batch = new_batch();
  for (uint64_t n = 0; n < objects_for(size, f.object_size); ++n)
    batch->ops.push_back(object_op(ObjectOp::Kind::kStat, *st, n));
  batch->start();
  batch->wait();
  count_ops(*batch);
  if (int rc = batch->first_error(true)) return rc;
  // Buffered bytes count too (the objects will hold them): never less than
  // what was written.
  uint64_t bytes = st->pending_bytes.load();
  for (const ObjectOp &o : batch->ops)
    if (o.rc >= 0) bytes += o.stat.size;
  return static_cast<int64_t>((bytes + 511) / 512);
}

FileDataStats FileDataImpl::stats() const {
  FileDataStats s;
  s.object_writes = counters_.object_writes.load();
  s.object_reads = counters_.object_reads.load();
  s.object_removes = counters_.object_removes.load();
  s.bytes_written = counters_.bytes_written.load();
  s.bytes_read = counters_.bytes_read.load();
  s.readahead_hits = counters_.readahead_hits.load();
  s.object_errors = counters_.object_errors.load();
  s.writeback_bytes = total_pending_.load();
  std::lock_guard flk(files_m_);
  s.files = files_.size();
  return s;
}

}  // namespace

std::unique_ptr<FileData> FileData::create(const strata_client_api *api, strata_cluster_t cluster,
                                           FileDataOptions opts) {
  if (!api || !cluster) return nullptr;
  return std::make_unique<FileDataImpl>(api, cluster, opts);
}

}  // namespace strata::fuse
