#include "common/work_queue.h"

#include "common/thread_name.h"

namespace strata {

WorkQueue::WorkQueue(Options opts) : opts_(std::move(opts)), serial_(opts_.threads <= 1) {}

WorkQueue::~WorkQueue() { stop(); }

void WorkQueue::start() {
  std::lock_guard lk(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  next_tick_ = Clock::now() + (opts_.tick_at_start ? Clock::duration::zero()
                                                   : Clock::duration(opts_.tick_interval));
  const int n = opts_.threads < 1 ? 1 : opts_.threads;
  for (int i = 0; i < n; ++i)
    workers_.emplace_back([this, i, n] {
      name_this_thread(n == 1 ? opts_.name : opts_.name + "-" + std::to_string(i));
      work();
    });
}

void WorkQueue::post(Task fn) {
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

void WorkQueue::run_or_post(Task fn) {
  {
    std::unique_lock lk(mu_);
    if (stopping_) return;
    if (!started_ || busy_ > 0 || !queue_.empty()) {
      queue_.push_back(std::move(fn));
      lk.unlock();
      cv_.notify_one();
      return;
    }
    ++busy_;
  }
  fn();
  fn = nullptr;  // what it held goes before the queue counts as idle again
  bool more;
  {
    std::lock_guard lk(mu_);
    --busy_;
    more = !queue_.empty() || (ticks() && Clock::now() >= next_tick_);
  }
  if (more) cv_.notify_one();  // posted while it ran, or a tick is due: a worker takes them
}

void WorkQueue::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  {
    std::lock_guard jl(join_mu_);
    for (std::thread &t : workers_)
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  }
  std::deque<Task> dropped;
  {
    std::lock_guard lk(mu_);
    dropped.swap(queue_);
  }
  // Destroyed here, outside the lock: a task's destructor may post.
}

void WorkQueue::work() {
  std::deque<Task> batch;
  std::unique_lock lk(mu_);
  for (;;) {
    if (stopping_ && (opts_.on_stop == OnStop::kDrop || queue_.empty())) return;
    if (!queue_.empty() && may_run_locked()) {
      // A serial queue takes everything queued at once: one lock round per
      // burst of tasks. Parallel workers take one each.
      if (serial_) {
        batch.swap(queue_);
      } else {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      ++busy_;
      lk.unlock();
      for (Task &fn : batch) {
        if (stopping_ && opts_.on_stop == OnStop::kDrop) break;
        fn();
        fn = nullptr;
      }
      batch.clear();  // outside the lock: a task's destructor may post
      lk.lock();
      --busy_;
      continue;
    }
    const bool tick_armed = ticks() && !tick_running_ && !stopping_;
    const bool tick_due = tick_armed && Clock::now() >= next_tick_;
    if (tick_due && may_run_locked()) {
      next_tick_ = Clock::now() + opts_.tick_interval;
      tick_running_ = true;
      ++busy_;
      lk.unlock();
      opts_.on_tick();
      lk.lock();
      --busy_;
      tick_running_ = false;
      continue;
    }
    // A due tick that waits for a task running on a caller (run_or_post)
    // is woken by that caller.
    if (tick_armed && !tick_due)
      cv_.wait_until(lk, next_tick_);
    else
      cv_.wait(lk);
  }
}

}  // namespace strata
