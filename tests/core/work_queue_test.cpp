// WorkQueue (core/common/work_queue.h): order on a serial queue, parallel
// workers, run_or_post, stop dropping or draining, thread names, ticks.
#include "common/work_queue.h"

#include <pthread.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using strata::WorkQueue;
using namespace std::chrono_literals;

namespace {

// Only a guard against a hang: a test that works never comes near it.
constexpr auto kHangGuard = 20s;

// A gate tasks wait at until the test opens it.
class Gate {
 public:
  void open() {
    std::lock_guard lk(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, kHangGuard, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Counts events and lets the test wait for a number of them.
class Counter {
 public:
  void add() {
    std::lock_guard lk(mu_);
    ++n_;
    cv_.notify_all();
  }
  bool wait_for(int n) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, kHangGuard, [&] { return n_ >= n; });
  }
  int get() {
    std::lock_guard lk(mu_);
    return n_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_ = 0;
};

struct Seen {
  std::mutex mu;
  std::vector<int> v;
  void add(int x) {
    std::lock_guard lk(mu);
    v.push_back(x);
  }
  std::vector<int> get() {
    std::lock_guard lk(mu);
    return v;
  }
};

std::string thread_name() {
  char buf[16] = {};
  pthread_getname_np(pthread_self(), buf, sizeof buf);
  return buf;
}

// Calls q.stop() on another thread and returns once the stop has begun
// (the queue refuses posts), so the test can act while stop() waits.
std::thread stop_in_background(WorkQueue &q) {
  std::thread t([&q] { q.stop(); });
  while (!q.stopping()) std::this_thread::yield();
  return t;
}

}  // namespace

TEST_CASE("a serial work queue runs tasks posted before and after start in order, one at a time") {
  WorkQueue q({.name = "wq-serial"});
  Seen seen;
  std::atomic<int> running{0}, overlaps{0};
  Counter done;
  auto task = [&](int i) {
    return [&, i] {
      if (running.fetch_add(1) != 0) overlaps++;
      seen.add(i);
      running.fetch_sub(1);
      done.add();
    };
  };
  for (int i = 0; i < 50; ++i) q.post(task(i));
  CHECK(done.get() == 0);  // nothing runs before start()
  q.start();
  for (int i = 50; i < 500; ++i) q.post(task(i));
  REQUIRE(done.wait_for(500));
  q.stop();
  CHECK(overlaps == 0);
  std::vector<int> want(500);
  for (int i = 0; i < 500; ++i) want[i] = i;
  CHECK(seen.get() == want);
}

TEST_CASE("a work queue names its threads, with an index when it has several") {
  WorkQueue one({.name = "wq-one"});
  WorkQueue pool({.name = "wq-pool", .threads = 2});
  one.start();
  pool.start();
  std::mutex mu;
  std::set<std::string> names;
  Gate both_started;
  Counter started, finished;
  one.post([&] {
    std::lock_guard lk(mu);
    names.insert(thread_name());
    finished.add();
  });
  // Two tasks that hold their workers until both run: each on its own.
  for (int i = 0; i < 2; ++i)
    pool.post([&] {
      {
        std::lock_guard lk(mu);
        names.insert(thread_name());
      }
      started.add();
      both_started.wait();
      finished.add();
    });
  REQUIRE(started.wait_for(2));  // on a serial queue the second would never start
  both_started.open();
  REQUIRE(finished.wait_for(3));
  CHECK(names == std::set<std::string>{"wq-one", "wq-pool-0", "wq-pool-1"});
}

TEST_CASE(
    "run_or_post runs on the caller when the queue is idle and queues behind work otherwise") {
  Counter done;
  {
    WorkQueue unstarted({.name = "wq-unstarted"});
    std::atomic<bool> ran{false};
    unstarted.run_or_post([&] {
      ran = true;
      done.add();
    });
    CHECK_FALSE(ran);  // not started yet: queued
    unstarted.start();
    REQUIRE(done.wait_for(1));
  }

  WorkQueue q({.name = "wq-inline"});
  q.start();
  std::thread::id ran_on;
  bool inline_ran = false;
  q.run_or_post([&] {
    ran_on = std::this_thread::get_id();
    inline_ran = true;
  });
  REQUIRE(inline_ran);  // before run_or_post returned
  CHECK(ran_on == std::this_thread::get_id());

  // Busy: it goes behind the running task and the one queued after it.
  Gate gate;
  Seen seen;
  Counter started;
  q.post([&] {
    started.add();
    gate.wait();
    seen.add(1);
  });
  q.post([&] { seen.add(2); });
  REQUIRE(started.wait_for(1));
  q.run_or_post([&] {
    seen.add(3);
    done.add();
  });
  CHECK(seen.get().empty());
  gate.open();
  REQUIRE(done.wait_for(2));
  CHECK(seen.get() == std::vector<int>{1, 2, 3});
}

TEST_CASE("run_or_post and post from many threads keep each thread's order and never overlap") {
  WorkQueue q({.name = "wq-mixed"});
  q.start();
  Seen seen;
  std::atomic<int> running{0}, overlaps{0};
  constexpr int kPerThread = 300;
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto ev = [&, t, i] {
          if (running.fetch_add(1) != 0) overlaps++;
          seen.add(t * 100000 + i);
          running.fetch_sub(1);
        };
        if (i % 2)
          q.post(ev);
        else
          q.run_or_post(ev);
      }
    });
  for (auto &t : callers) t.join();
  Counter flushed;
  q.post([&] { flushed.add(); });
  REQUIRE(flushed.wait_for(1));
  q.stop();
  CHECK(overlaps == 0);
  std::vector<int> v = seen.get();
  REQUIRE(v.size() == 3 * kPerThread);
  std::vector<int> last(3, -1);
  for (int x : v) {
    CHECK(x % 100000 > last[x / 100000]);
    last[x / 100000] = x % 100000;
  }
}

TEST_CASE("stop on a dropping queue finishes the running task and destroys the queued ones unrun") {
  WorkQueue q({.name = "wq-drop"});
  q.start();
  Gate gate;
  Counter started;
  bool first_finished = false;
  q.post([&] {
    started.add();
    gate.wait();
    first_finished = true;
  });
  REQUIRE(started.wait_for(1));
  auto held = std::make_shared<int>(7);
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) q.post([&ran, held] { ++ran; });
  CHECK(held.use_count() == 11);
  std::thread stopper = stop_in_background(q);
  q.post([&ran] { ++ran; });  // after stop began: dropped
  gate.open();
  stopper.join();
  CHECK(first_finished);
  CHECK(ran == 0);
  CHECK(held.use_count() == 1);  // the dropped tasks released what they held
  q.run_or_post([&ran] { ++ran; });
  q.stop();  // idempotent
  CHECK(ran == 0);
}

TEST_CASE("stop on a draining pool runs every task queued before it, and none posted after") {
  WorkQueue q({.name = "wq-drain", .threads = 2, .on_stop = WorkQueue::OnStop::kDrain});
  q.start();
  Gate gate;
  Counter started;
  for (int i = 0; i < 2; ++i)
    q.post([&] {
      started.add();
      gate.wait();
    });
  REQUIRE(started.wait_for(2));  // both workers held
  std::atomic<int> ran{0};
  for (int i = 0; i < 20; ++i) q.post([&] { ran++; });
  std::thread stopper = stop_in_background(q);
  q.post([&] { ran += 1000; });  // after stop began: dropped
  gate.open();
  stopper.join();
  CHECK(ran == 20);
}

TEST_CASE("a tick at start runs at once; a later first tick waits its interval") {
  Counter ticks;
  WorkQueue eager({.name = "wq-tick", .tick_interval = 1h, .tick_at_start = true, .on_tick = [&] {
                     ticks.add();
                   }});
  eager.start();
  REQUIRE(ticks.wait_for(1));

  Counter lazy_ticks, done;
  WorkQueue lazy(
      {.name = "wq-tick-late", .tick_interval = 1h, .on_tick = [&] { lazy_ticks.add(); }});
  lazy.start();
  lazy.post([&] { done.add(); });
  REQUIRE(done.wait_for(1));
  lazy.stop();
  CHECK(lazy_ticks.get() == 0);
  eager.stop();
  CHECK(ticks.get() == 1);
}

TEST_CASE("ticks repeat, and on a serial queue never run while a task does") {
  std::atomic<bool> in_task{false};
  std::atomic<int> overlaps{0};
  Counter ticks;
  WorkQueue q({.name = "wq-ticks", .tick_interval = 1ms, .on_tick = [&] {
                 if (in_task) overlaps++;
                 ticks.add();
               }});
  q.start();
  Counter done;
  for (int i = 0; i < 40; ++i)
    q.post([&] {
      in_task = true;
      std::this_thread::sleep_for(200us);
      in_task = false;
      done.add();
    });
  // A task run inline holds the ticks off too.
  for (int i = 0; i < 40; ++i)
    q.run_or_post([&] {
      in_task = true;
      std::this_thread::sleep_for(200us);
      in_task = false;
    });
  REQUIRE(done.wait_for(40));
  REQUIRE(ticks.wait_for(3));
  q.stop();
  CHECK(overlaps == 0);
}
