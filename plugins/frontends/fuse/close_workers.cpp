#include "close_workers.h"

#include <pthread.h>

#include <algorithm>

namespace strata::fuse {

CloseWorkers::CloseWorkers(size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i)
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

void CloseWorkers::post(uint64_t ino, std::function<void()> job) {
  {
    std::lock_guard<std::mutex> l(mu_);
    uint64_t id = ++posted_;
    open_.insert(id);
    ++jobs_of_[ino];
    queue_.push_back(Job{id, ino, std::move(job)});
  }
  work_cv_.notify_one();
}

std::deque<CloseWorkers::Job>::iterator CloseWorkers::next_runnable() {
  return std::find_if(queue_.begin(), queue_.end(),
                      [&](const Job &j) { return running_inos_.count(j.ino) == 0; });
}

void CloseWorkers::run() {
  pthread_setname_np(pthread_self(), "fuse-close");
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    auto it = queue_.end();
    // On stop, what is queued still runs (the destructor's promise).
    work_cv_.wait(l, [&] {
      it = next_runnable();
      return it != queue_.end() || (stopping_ && queue_.empty());
    });
    if (it == queue_.end()) return;
    Job job = std::move(*it);
    queue_.erase(it);
    running_inos_.insert(job.ino);
    l.unlock();
    job.fn();
    job.fn = nullptr;  // whatever the job holds goes before the lock
    l.lock();
    running_inos_.erase(job.ino);
    if (auto c = jobs_of_.find(job.ino); c != jobs_of_.end() && --c->second == 0) jobs_of_.erase(c);
    open_.erase(job.id);
    done_cv_.notify_all();
    // Another job of this inode may be waiting for it.
    work_cv_.notify_all();
  }
}

void CloseWorkers::drain() {
  std::unique_lock<std::mutex> l(mu_);
  // Jobs finish out of order across threads: wait for the oldest one
  // still open to be newer than the call.
  uint64_t target = posted_;
  done_cv_.wait(l, [&] { return open_.empty() || *open_.begin() > target; });
}

void CloseWorkers::settle(uint64_t ino) {
  std::unique_lock<std::mutex> l(mu_);
  if (!jobs_of_.count(ino)) return;
  // Its jobs first, in their order (stable: the others keep theirs).
  std::stable_partition(queue_.begin(), queue_.end(), [&](const Job &j) { return j.ino == ino; });
  work_cv_.notify_all();
  done_cv_.wait(l, [&] { return jobs_of_.count(ino) == 0; });
}

size_t CloseWorkers::pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return open_.size();
}

}  // namespace strata::fuse
