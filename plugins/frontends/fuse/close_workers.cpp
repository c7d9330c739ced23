#include "close_workers.h"

#include <pthread.h>

#include <algorithm>

namespace strata::fuse {

namespace {
// While deferred jobs wait, how often over_limit is asked again (the
// buffers also fill through writes, which do not wake the workers).
constexpr auto kPressureCheck = std::chrono::milliseconds(100);
}  // namespace

CloseWorkers::CloseWorkers(size_t threads) : CloseWorkers(Options{threads, {}, {}}) {}

CloseWorkers::CloseWorkers(Options opts) : opts_(std::move(opts)) {
  for (size_t i = 0; i < std::max<size_t>(opts_.threads, 1); ++i)
    threads_.emplace_back([this] { run(); });
}

CloseWorkers::~CloseWorkers() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto &t : threads_) t.join();
}

void CloseWorkers::post(uint64_t ino, std::function<void()> job, bool defer) {
  bool wake = true;
  {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t id = ++posted_;
    open_.insert(id);
    ++jobs_of_[ino];
    Job j{id, ino, std::move(job), Clock::now()};
    if (defer && opts_.delay.count() > 0) {
      j.due += opts_.delay;
      // A worker wakes for the first only, to set its timer (then it wakes
      // when the oldest is due, or to look at the pressure): not one
      // futex wake per close of an untar.
      wake = deferred_.empty() ||
             (queue_.size() < threads_.size() && opts_.over_limit && opts_.over_limit());
      deferred_of_[ino].push_back(id);
      deferred_.emplace(id, std::move(j));
    } else {
      // Behind the inode's deferred jobs, which therefore go first.
      promote_ino(ino);
      queue_.push_back(std::move(j));
    }
  }
  if (wake) work_cv_.notify_one();
}

void CloseWorkers::promote(std::map<uint64_t, Job>::iterator it) {
  auto of = deferred_of_.find(it->second.ino);
  if (of != deferred_of_.end()) {
    auto &ids = of->second;
    ids.erase(std::find(ids.begin(), ids.end(), it->first));
    if (ids.empty()) deferred_of_.erase(of);
  }
  queue_.push_back(std::move(it->second));
  deferred_.erase(it);
}

void CloseWorkers::promote_ino(uint64_t ino) {
  auto of = deferred_of_.find(ino);
  if (of == deferred_of_.end()) return;
  std::vector<uint64_t> ids = std::move(of->second);
  deferred_of_.erase(of);
  for (uint64_t id : ids) {
    auto it = deferred_.find(id);
    queue_.push_back(std::move(it->second));
    deferred_.erase(it);
  }
}

size_t CloseWorkers::promote_due(Clock::time_point now) {
  // Once the oldest is due, those due within the next eighth of the delay
  // go with it: one wake-up starts a run of write-outs instead of one per
  // file closed (an rsync closes ~1,000 a second).
  const auto early = now + opts_.delay / 8;
  bool started = false;
  size_t n = 0;
  while (!deferred_.empty()) {
    auto it = deferred_.begin();
    bool due = stopping_ || it->second.due <= (started ? early : now);
    // Under pressure, one more at a time while the threads have little
    // to do: the oldest first, without flooding the queue.
    if (!due && !(queue_.size() < threads_.size() && opts_.over_limit && opts_.over_limit()))
      return n;
    started = true;
    promote(it);
    ++n;
  }
  return n;
}

std::deque<CloseWorkers::Job>::iterator CloseWorkers::next_runnable() {
  return std::find_if(queue_.begin(), queue_.end(),
                      [&](const Job &j) { return running_inos_.count(j.ino) == 0; });
}

void CloseWorkers::finished(uint64_t id, uint64_t ino) {
  if (auto c = jobs_of_.find(ino); c != jobs_of_.end() && --c->second == 0) jobs_of_.erase(c);
  open_.erase(id);
}

void CloseWorkers::run() {
  pthread_setname_np(pthread_self(), "fuse-close");
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    // More than one job came due: as many more workers as can take them
    // (the others sleep on).
    if (size_t n = promote_due(Clock::now()); n > 1)
      for (size_t i = 1; i < std::min(n, threads_.size()); ++i) work_cv_.notify_one();
    auto it = next_runnable();
    if (it == queue_.end()) {
      // On stop, what is queued still runs (the destructor's promise).
      if (stopping_ && queue_.empty() && deferred_.empty()) return;
      if (!deferred_.empty() && !timer_taken_) {
        // One worker keeps the time of the deferred jobs: with every idle
        // worker waiting for the same instant, each due job woke them all.
        timer_taken_ = true;
        work_cv_.wait_until(l,
                            std::min(deferred_.begin()->second.due, Clock::now() + kPressureCheck));
        timer_taken_ = false;
      } else {
        work_cv_.wait(l);
      }
      continue;
    }
    Job job = std::move(*it);
    queue_.erase(it);
    running_inos_.insert(job.ino);
    l.unlock();
    job.fn();
    job.fn = nullptr;  // whatever the job holds goes before the lock
    l.lock();
    running_inos_.erase(job.ino);
    finished(job.id, job.ino);
    done_cv_.notify_all();
    // A job of this inode that waited for this one: this worker takes it
    // next (the loop); nobody else needs waking for it. The timer: if this
    // worker had left it, it is free again and someone must keep it.
    if (!deferred_.empty() && !timer_taken_) work_cv_.notify_one();
  }
}

void CloseWorkers::drain() {
  std::unique_lock<std::mutex> l(mu_);
  // Jobs finish out of order across threads: wait for the oldest one
  // still open to be newer than the call.
  uint64_t target = posted_;
  while (!deferred_.empty()) promote(deferred_.begin());
  work_cv_.notify_all();
  done_cv_.wait(l, [&] { return open_.empty() || *open_.begin() > target; });
}

void CloseWorkers::settle(uint64_t ino) {
  std::unique_lock<std::mutex> l(mu_);
  if (!jobs_of_.count(ino)) return;
  promote_ino(ino);
  // Its jobs first, in their order (stable: the others keep theirs).
  std::stable_partition(queue_.begin(), queue_.end(), [&](const Job &j) { return j.ino == ino; });
  work_cv_.notify_all();
  done_cv_.wait(l, [&] { return jobs_of_.count(ino) == 0; });
}

bool CloseWorkers::cancel(uint64_t ino, const std::function<bool()> &may_drop) {
  std::vector<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto c = jobs_of_.find(ino);
    auto of = deferred_of_.find(ino);
    if (c == jobs_of_.end() || of == deferred_of_.end() || of->second.size() != c->second)
      return false;  // none, or one is queued or running
    if (!may_drop()) return false;
    for (uint64_t id : of->second) {
      auto it = deferred_.find(id);
      dropped.push_back(std::move(it->second.fn));
      deferred_.erase(it);
      open_.erase(id);
    }
    deferred_of_.erase(of);
    jobs_of_.erase(c);
  }
  done_cv_.notify_all();
  return true;  // (what the jobs held goes here, outside the lock)
}

size_t CloseWorkers::pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return open_.size();
}

bool CloseWorkers::has_jobs(uint64_t ino) const {
  std::lock_guard<std::mutex> l(mu_);
  return jobs_of_.count(ino) > 0;
}

size_t CloseWorkers::deferred() const {
  std::lock_guard<std::mutex> l(mu_);
  return deferred_.size();
}

}  // namespace strata::fuse
