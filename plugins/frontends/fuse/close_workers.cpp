#include "close_workers.h"

namespace strata::fuse {

CloseWorkers::CloseWorkers(size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i)
    workers_.push_back(std::make_unique<MessageWorker>());
}

CloseWorkers::~CloseWorkers() { workers_.clear(); }

void CloseWorkers::post(uint64_t ino, std::function<void()> job) {
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    id = ++posted_;
    open_.insert(id);
  }
  workers_[ino % workers_.size()]->post([this, id, job = std::move(job)] {
    job();
    std::lock_guard<std::mutex> l(mu_);
    open_.erase(id);
    cv_.notify_all();
  });
}

void CloseWorkers::drain() {
  std::unique_lock<std::mutex> l(mu_);
  // Jobs finish out of order across threads: wait for the oldest one
  // still open to be newer than the call.
  uint64_t target = posted_;
  cv_.wait(l, [&] { return open_.empty() || *open_.begin() > target; });
}

size_t CloseWorkers::pending() const {
  std::lock_guard<std::mutex> l(mu_);
  return open_.size();
}

}  // namespace strata::fuse
