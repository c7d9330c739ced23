// The client's own threads besides the messenger's: one worker that runs
// posted tasks in order and a periodic tick (op timeouts, reconnect
// back-off), and short-lived threads for calls that block (connecting to an
// OSD or the monitor), so that a dead peer never stalls the worker or a
// network thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "common/work_queue.h"

namespace strata::client {

class Background {
 public:
  Background(std::chrono::milliseconds tick_interval, std::function<void()> on_tick);
  ~Background();  // stop()
  Background(const Background &) = delete;
  Background &operator=(const Background &) = delete;

  void start() { worker_.start(); }
  // Runs fn on the worker thread, after the tasks posted before it.
  // Dropped after stop().
  void post(std::function<void()> fn) { worker_.post(std::move(fn)); }
  // Runs fn on a new thread; stop() joins it. Dropped after stop().
  void spawn(std::function<void()> fn);
  // Stops the worker (pending tasks are dropped) and joins every thread.
  // Idempotent. Must not be called from one of these threads.
  void stop();

 private:
  // REQUIRES: mu_ held. Joins the spawned threads that have finished.
  void reap_locked();

  struct Spawned {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  std::mutex mu_;
  std::list<Spawned> spawned_;  // GUARDED_BY(mu_)
  bool stopping_ = false;       // GUARDED_BY(mu_)
  // Declared last: stopped first on destruction, while what its tick uses
  // still exists.
  WorkQueue worker_;
};

}  // namespace strata::client
