// Tasks run by a queue's own named worker threads: the one threading
// primitive the daemons and the client build on (an OSD shard, the OSD's
// stage pool and control thread, the client's background worker).
//
// With one worker the queue is serial: tasks run one at a time in the order
// they were posted (run_or_post keeps that too), so state touched only by
// its tasks needs no lock. With several workers tasks start in posting
// order and run in parallel.
//
// An optional tick runs every tick_interval on a worker when no posted task
// is waiting (posted tasks come first, so a queue that never empties delays
// its tick). Ticks never overlap each other.
//
// Threading: every method is thread-safe. stop() must not be called from a
// task of the same queue (it joins the workers).
//
//   WorkQueue q({.name = "osd-control", .tick_interval = 1s, .on_tick = [&] { beat(); }});
//   q.start();
//   q.post([&] { apply(map); });
//   q.stop();
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace strata {

class WorkQueue {
 public:
  using Task = std::function<void()>;
  using Clock = std::chrono::steady_clock;

  // What stop() does with the tasks still queued.
  enum class OnStop {
    kDrop,   // destroy them (releasing what they hold) without running them
    kDrain,  // the workers run them all before stop() returns
  };

  struct Options {
    // Thread name shown by top -H and gdb; with several workers each gets
    // "-<index>" appended. Linux keeps 15 characters.
    std::string name = {};
    int threads = 1;
    OnStop on_stop = OnStop::kDrop;
    // 0: no tick.
    std::chrono::milliseconds tick_interval{0};
    // The first tick at start() rather than one interval after it.
    bool tick_at_start = false;
    Task on_tick = {};
  };

  explicit WorkQueue(Options opts);
  ~WorkQueue();  // stop()
  WorkQueue(const WorkQueue &) = delete;
  WorkQueue &operator=(const WorkQueue &) = delete;

  // Starts the workers; tasks posted before run now. Does nothing after
  // stop() or a first start().
  void start();
  // Runs fn on a worker, after the tasks posted before it. After stop()
  // began, fn is dropped.
  void post(Task fn);
  // Runs fn on the calling thread, before returning, when the queue is idle
  // (started, nothing queued, no task or tick running), else posts it. It
  // saves waking a worker (slow on VMs whose idle vCPUs halt) and keeps the
  // queue's guarantees: on a serial queue tasks still run one at a time and
  // in order.
  void run_or_post(Task fn);
  // Stops the workers (see OnStop; a task running now always finishes) and
  // joins them. Idempotent.
  void stop();
  bool stopping() const { return stopping_.load(); }

 private:
  void work();
  // REQUIRES: mu_ held. Whether a worker may take a task or tick now.
  bool may_run_locked() const { return !serial_ || busy_ == 0; }
  bool ticks() const { return opts_.tick_interval.count() > 0 && opts_.on_tick; }

  const Options opts_;
  const bool serial_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;             // GUARDED_BY(mu_)
  int busy_ = 0;                       // tasks and ticks running; GUARDED_BY(mu_)
  bool started_ = false;               // GUARDED_BY(mu_)
  bool tick_running_ = false;          // GUARDED_BY(mu_)
  Clock::time_point next_tick_;        // GUARDED_BY(mu_)
  std::atomic<bool> stopping_{false};  // written under mu_
  std::mutex join_mu_;                 // one stop() joins at a time
  std::vector<std::thread> workers_;   // written by start() under mu_, joined under join_mu_
};

}  // namespace strata
