#include "osd/stage_pool.h"

#include <string>

#include "common/thread_name.h"

namespace strata::osd {

StagePool::StagePool(int threads) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this, i] {
      name_this_thread("osd-stage-" + std::to_string(i));
      loop();
    });
}

void StagePool::post(std::function<void()> fn) {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void StagePool::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread &t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void StagePool::loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    fn();
    fn = nullptr;  // destroy what it held outside the lock
    lk.lock();
  }
}

}  // namespace strata::osd
