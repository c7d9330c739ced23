// The client's own threads besides the messenger's: one worker that runs
// posted tasks in order and a periodic tick (op timeouts, reconnect
// back-off), and short-lived threads for calls that block (connecting to an
// OSD or the monitor), so that a dead peer never stalls the worker or a
// network thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

namespace strata::client {

class Background {
 public:
  Background(std::chrono::milliseconds tick_interval, std::function<void()> on_tick);
  ~Background();  // stop()
  Background(const Background &) = delete;
  Background &operator=(const Background &) = delete;

  void start();
  // Runs fn on the worker thread, after the tasks posted before it.
  // Dropped after stop().
  void post(std::function<void()> fn);
  // Runs fn on a new thread; stop() joins it. Dropped after stop().
  void spawn(std::function<void()> fn);
  // Stops the worker (pending tasks are dropped) and joins every thread.
  // Idempotent. Must not be called from one of these threads.
  void stop();
  bool stopping() const { return stopping_.load(); }

 private:
  void run();
  void reap_locked();

  struct Spawned {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  const std::chrono::milliseconds tick_interval_;
  std::function<void()> on_tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::list<Spawned> spawned_;
  std::thread worker_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
};

}  // namespace strata::client
