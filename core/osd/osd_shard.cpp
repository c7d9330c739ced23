#include "osd/osd_shard.h"

#include "common/thread_name.h"

namespace strata::osd {

void OsdShard::start() {
  std::lock_guard lk(mu_);
  running_ = true;
  thread_ = std::thread([this] {
    name_this_thread("osd-shard-" + std::to_string(index_));
    loop();
  });
}

void OsdShard::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lk(mu_);
  queue_.clear();
}

void OsdShard::post(std::function<void()> fn) {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void OsdShard::run_or_post(std::function<void()> fn) {
  {
    std::unique_lock lk(mu_);
    if (stopping_) return;
    if (busy_ || !queue_.empty() || !running_) {
      queue_.push_back(std::move(fn));
      lk.unlock();
      cv_.notify_one();
      return;
    }
    busy_ = true;
  }
  fn();
  bool more;
  {
    std::lock_guard lk(mu_);
    busy_ = false;
    more = !queue_.empty();
  }
  if (more) cv_.notify_one();  // posted while it ran: the shard thread takes them
}

void OsdShard::loop() {
  std::deque<std::function<void()>> batch;
  for (;;) {
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || (!queue_.empty() && !busy_); });
      if (stopping_) return;
      // Take everything queued at once: one lock round per burst of events.
      batch.swap(queue_);
      busy_ = true;
    }
    for (auto &fn : batch) fn();
    batch.clear();  // outside the lock: a closure's destructor may post
    std::lock_guard lk(mu_);
    busy_ = false;
  }
}

}  // namespace strata::osd
