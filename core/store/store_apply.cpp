// Applying to the backend and checkpointing: the apply thread's loop, the
// depth-1 inline apply on the journal's thread, the object stripes an apply
// holds, and the checkpoint that lets the journal be trimmed (also on
// request: checkpoint_now).
//
// Threading: apply_loop is the apply thread; apply_inline runs on the
// journal plugin's thread. Whoever applies or checkpoints owns the backend
// (backend_busy_, handed over under mu_), so applies never overlap each
// other or a checkpoint; the checkpoint bookkeeping (bytes and busy time
// since the last checkpoint) is written by that owner only.
// checkpoint_now() runs on any caller thread and waits for the apply thread.
#include <algorithm>

#include "store/store.h"
#include "store/store_internal.h"

namespace strata::store {

using namespace internal;

// The depth-1 fast path: f is a small transaction (inline_ok), durable,
// next in seq order and alone in the queue, and nobody is applying or
// checkpointing. (Transactions with a CLONE on a backend without exact
// replay are never inline_ok: the apply thread checkpoints right after them,
// before applying anything else.)
bool Store::can_apply_inline_locked(const InFlight &f) const {
  return f.inline_ok && journal_ && !parallel_apply_ && failed_.ok() && !stopping_ &&
         !backend_busy_ && !checkpoint_requested_ && queue_.size() == 1 &&
         queue_.front().get() == &f;
}

bool Store::apply_thread_has_work_locked() const {
  if (backend_busy_) return false;
  if (!queue_.empty() && (queue_.front()->durable || parallel_apply_ || !journal_)) return true;
  return checkpoint_requested_ && applied_seq_ > committed_seq_;
}

void Store::apply_inline(const std::shared_ptr<InFlight> &f) {
  if (!apply_striped(*f)) return;
  bool complete_now = mark_applied(*f);
  bytes_since_checkpoint_ += f->bytes;
  bool ckpt = checkpoint_due(*f);
  {
    std::lock_guard lk(mu_);
    ++inline_applies_;
    // Never checkpoint here: a syncfs would hold up the journal's writer.
    // The apply thread does it (release_backend() wakes it).
    if (ckpt) checkpoint_requested_ = true;
  }
  done_cv_.notify_all();
  if (complete_now)
    complete(f, Status::OK(), /*release_backend=*/true);
  else
    release_backend();
}

void Store::release_backend() {
  bool wake;
  {
    std::lock_guard lk(mu_);
    backend_busy_ = false;
    wake = apply_thread_has_work_locked();
  }
  done_cv_.notify_all();  // close() may wait for the backend
  if (wake) cv_.notify_all();
}

Status Store::apply_one(InFlight &f) {
  strata_err err{};
  int rc = backend_->apply(f.seq, f.txn.ops(), journal_ ? 0 : STRATA_TXN_SYNC, &err);
  if (rc < 0)
    return Status::Error(rc, "backend " + meta_.backend + " failed to apply seq " +
                                 std::to_string(f.seq) + ": " + err.msg);
  return Status::OK();
}

// Called with no apply running (apply thread, open, close).
Status Store::checkpoint_locked_out(uint64_t seq) {
  strata_err err{};
  if (journal_ && parallel_apply_) {
    // The checkpoint may contain transactions applied before their journal
    // write finished; the journal must never be trimmed past what it holds.
    int rc = journal_->ops()->flush(journal_->handle(), &err);
    if (rc < 0) return Status::Error(rc, std::string("journal flush: ") + err.msg);
  }
  auto start = Clock::now();
  int rc = backend_->ops()->checkpoint(backend_->handle(), seq, &err);
  if (rc < 0)
    return Status::Error(rc, "backend " + meta_.backend + " checkpoint at seq " +
                                 std::to_string(seq) + ": " + err.msg);
  if (journal_) {
    rc = journal_->ops()->trim(journal_->handle(), seq, &err);
    if (rc < 0) return Status::Error(rc, std::string("journal trim: ") + err.msg);
  }
  auto now = Clock::now();
  busy_since_checkpoint_ += now - start;
  double busy = std::chrono::duration<double>(busy_since_checkpoint_).count();
  if (bytes_since_checkpoint_ > 0 && busy > 0) {
    // Drain rate: what the backend absorbed per second of its own work,
    // applying plus syncing, i.e. how fast the journal can be emptied.
    double rate = bytes_since_checkpoint_ / std::max(busy, 1e-4);
    drain_rate_ = 0.5 * drain_rate_.load() + 0.5 * rate;
  }
  bytes_since_checkpoint_ = 0;
  busy_since_checkpoint_ = {};
  last_checkpoint_ = now;
  checkpoints_++;
  std::lock_guard lk(mu_);
  committed_seq_ = std::max(committed_seq_, seq);
  checkpoint_requested_ = false;
  return Status::OK();
}

bool Store::apply_striped(InFlight &f) {
  auto apply_start = Clock::now();
  std::vector<size_t> stripes = stripes_of(f);
  for (size_t i : stripes) stripes_[i].lock();
  Status st = apply_one(f);
  for (size_t i : stripes) stripes_[i].unlock();
  busy_since_checkpoint_ += Clock::now() - apply_start;
  if (st.ok()) return true;
  fail(st);  // completes f too: it is still in live_
  release_backend();
  return false;
}

bool Store::mark_applied(InFlight &f) {
  std::lock_guard lk(mu_);
  f.applied = true;
  if (!journal_) f.durable = true;
  applied_seq_ = f.seq;
  for (const std::string &k : f.objs)
    if (--pending_objects_[k] == 0) pending_objects_.erase(k);
  if (f.early_acked) {
    for (const std::string &k : f.objs) {
      auto it = acked_unapplied_.find(k);
      if (it != acked_unapplied_.end() && --it->second == 0) acked_unapplied_.erase(it);
    }
  }
  bool complete_now = f.durable && !f.completed;
  if (complete_now) f.completed = true;
  return complete_now;
}

bool Store::checkpoint_due(const InFlight &f) {
  if (f.has_clone && !exact_replay_) return true;
  if (Clock::now() - last_checkpoint_ >=
      std::chrono::milliseconds(settings_.checkpoint_interval_ms))
    return true;
  if (journal_) {
    strata_journal_stat js = journal_->stat();
    if (js.capacity_bytes &&
        100.0 * js.used_bytes / js.capacity_bytes >= settings_.checkpoint_fill_pct)
      return true;
  }
  std::lock_guard lk(mu_);
  return checkpoint_requested_;
}

void Store::apply_loop() {
  for (;;) {
    std::shared_ptr<InFlight> f;
    bool do_checkpoint = false;
    uint64_t ckpt_seq = 0;
    {
      std::unique_lock lk(mu_);
      auto ready = [&] {
        return !backend_busy_ && !queue_.empty() &&
               (queue_.front()->durable || parallel_apply_ || !journal_);
      };
      auto idle_ckpt = [&] {
        return !backend_busy_ && applied_seq_ > committed_seq_ && checkpoint_requested_;
      };
      bool woke =
          cv_.wait_for(lk, std::chrono::milliseconds(settings_.checkpoint_interval_ms),
                       [&] { return ready() || stopping_ || idle_ckpt() || !failed_.ok(); });
      if (!failed_.ok()) return;
      if (ready()) {
        f = queue_.front();
        queue_.pop_front();
        backend_busy_ = true;
      } else if (stopping_) {
        return;
      } else if (!backend_busy_ && applied_seq_ > committed_seq_ &&
                 (!woke || checkpoint_requested_)) {
        do_checkpoint = true;
        ckpt_seq = applied_seq_;
        backend_busy_ = true;
      }
    }
    if (do_checkpoint) {
      Status st = checkpoint_locked_out(ckpt_seq);
      release_backend();
      if (!st.ok()) fail(st);
      continue;
    }
    if (!f) continue;

    if (!apply_striped(*f)) return;
    bool complete_now = mark_applied(*f);
    done_cv_.notify_all();
    // The callback runs before the backend is given up, so that an inline
    // apply of the next transaction cannot complete ahead of this one.
    if (complete_now) complete(f, Status::OK());

    bytes_since_checkpoint_ += f->bytes;
    if (checkpoint_due(*f)) {
      Status cst = checkpoint_locked_out(f->seq);
      if (!cst.ok()) {
        release_backend();
        fail(cst);
        continue;
      }
    }
    release_backend();
  }
}

Status Store::checkpoint_now() {
  drain();
  uint64_t target;
  {
    std::lock_guard lk(mu_);
    target = applied_seq_;
    if (committed_seq_ >= target) return Status::OK();
    checkpoint_requested_ = true;
  }
  cv_.notify_all();
  std::unique_lock lk(mu_);
  while (committed_seq_ < target && failed_.ok()) {
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cv_.notify_all();
    lk.lock();
  }
  return failed_;
}

std::vector<size_t> Store::stripes_of(const InFlight &f) const {
  std::vector<size_t> out;
  if (!f.colls.empty()) {
    // Collection ops touch every object of the collection.
    for (size_t i = 0; i < kStripes; ++i) out.push_back(i);
    return out;
  }
  for (const std::string &k : f.objs) out.push_back(std::hash<std::string>{}(k) % kStripes);
  // A fixed order, so that two lockers can never wait for each other.
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace strata::store
