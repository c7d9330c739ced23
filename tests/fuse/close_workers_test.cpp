// CloseWorkers (plugins/frontends/fuse/close_workers.h): one inode's jobs run
// in order and never two at once; drain() waits for everything posted
// before it; a waiting job holds up only its own inode; settle(ino) runs
// that inode's jobs ahead of a backlog and waits for them alone. Deferred
// jobs wait their delay unless drained, settled, pushed by over_limit or
// cancelled, and keep their inode's order.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "close_workers.h"

namespace strata::fuse {
namespace {

using namespace std::chrono_literals;

TEST_CASE("close workers: an inode's jobs run in order, one at a time; drain waits for all") {
  CloseWorkers w(4);
  std::mutex mu;
  std::map<uint64_t, std::vector<int>> order;
  std::map<uint64_t, int> running;
  std::atomic<bool> overlap{false};
  for (int i = 0; i < 200; ++i) {
    uint64_t ino = 1 + i % 5;
    w.post(ino, [&, ino, i] {
      {
        std::lock_guard<std::mutex> l(mu);
        if (running[ino]++ > 0) overlap = true;
        order[ino].push_back(i);
      }
      std::this_thread::sleep_for(100us);
      std::lock_guard<std::mutex> l(mu);
      --running[ino];
    });
  }
  w.drain();
  CHECK(w.pending() == 0);
  CHECK_FALSE(overlap);
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(order.size() == 5);
  for (const auto &[ino, seq] : order) {
    CHECK(seq.size() == 40);
    for (size_t k = 1; k < seq.size(); ++k) CHECK(seq[k] > seq[k - 1]);
  }
}

TEST_CASE("close workers: a job that waits holds up only its own inode's jobs") {
  CloseWorkers w(2);
  std::atomic<bool> release{false};
  std::atomic<int> others_done{0};
  w.post(7, [&] {
    while (!release) std::this_thread::sleep_for(1ms);
  });
  std::atomic<bool> second_of_7{false};
  w.post(7, [&] { second_of_7 = true; });
  // Inode 7's second job waits for its first; everyone else goes on, on
  // the other thread (per-thread queues would have put some behind it).
  for (int i = 0; i < 40; ++i) w.post(100 + i, [&] { ++others_done; });
  for (int i = 0; i < 2000 && others_done < 40; ++i) std::this_thread::sleep_for(1ms);
  CHECK(others_done == 40);
  CHECK_FALSE(second_of_7);
  release = true;
  w.drain();
  CHECK(second_of_7);
}

TEST_CASE(
    "close workers: settle runs one inode's jobs ahead of a backlog and waits only for them") {
  CloseWorkers w(2);
  std::atomic<bool> release{false};
  std::atomic<int> backlog_done{0};
  // Both threads busy, and a long queue behind them.
  for (uint64_t ino = 100; ino < 102; ++ino)
    w.post(ino, [&] {
      while (!release) std::this_thread::sleep_for(1ms);
    });
  for (int i = 0; i < 50; ++i)
    w.post(200 + i, [&] {
      std::this_thread::sleep_for(2ms);
      ++backlog_done;
    });
  std::atomic<int> victim_jobs{0};
  w.post(7, [&] { ++victim_jobs; });
  w.post(7, [&] { ++victim_jobs; });
  std::thread releaser([&] {
    std::this_thread::sleep_for(20ms);
    release = true;
  });
  w.settle(7);
  CHECK(victim_jobs == 2);
  // The victim's jobs went first: most of the backlog is still waiting.
  CHECK(backlog_done < 25);
  releaser.join();
  w.settle(12345);  // nothing of it: returns at once
  w.drain();
  CHECK(backlog_done == 50);
}

TEST_CASE("close workers: destruction runs what is queued") {
  std::atomic<int> ran{0};
  {
    CloseWorkers w(1);
    for (int i = 0; i < 20; ++i) w.post(i, [&] { ++ran; });
  }
  CHECK(ran == 20);
}

CloseWorkers::Options deferring(std::chrono::milliseconds delay,
                                std::function<bool()> over_limit = {}) {
  CloseWorkers::Options o;
  o.threads = 2;
  o.delay = delay;
  o.over_limit = std::move(over_limit);
  return o;
}

TEST_CASE("close workers: a deferred job waits its delay; drain runs it at once") {
  std::atomic<int> ran{0};
  {
    CloseWorkers w(deferring(300ms));
    auto t0 = std::chrono::steady_clock::now();
    w.post(
        1, [&] { ++ran; }, true);
    CHECK(w.deferred() == 1);
    CHECK(w.pending() == 1);
    std::this_thread::sleep_for(100ms);
    CHECK(ran == 0);
    for (int i = 0; i < 2000 && ran == 0; ++i) std::this_thread::sleep_for(1ms);
    CHECK(ran == 1);
    CHECK(std::chrono::steady_clock::now() - t0 >= 300ms);
    CHECK(w.deferred() == 0);

    CloseWorkers w2(deferring(1h));
    w2.post(
        2, [&] { ++ran; }, true);
    w2.post(
        3, [&] { ++ran; }, true);
    w2.drain();
    CHECK(ran == 3);
    w2.post(
        4, [&] { ++ran; }, true);
  }  // destruction runs the deferred one too
  CHECK(ran == 4);
}

TEST_CASE("close workers: an inode's jobs keep their order across deferred and immediate posts") {
  CloseWorkers w(deferring(1h));
  std::mutex mu;
  std::vector<int> order;
  auto note = [&](int k) {
    std::lock_guard<std::mutex> l(mu);
    order.push_back(k);
  };
  w.post(
      5, [&] { note(1); }, true);
  w.post(
      5, [&] { note(2); }, true);
  // Not deferred, but behind the inode's deferred jobs: they start now.
  w.post(5, [&] { note(3); });
  w.post(
      6, [&] { note(10); }, true);  // another inode's stays deferred
  w.settle(5);
  {
    std::lock_guard<std::mutex> l(mu);
    CHECK(order == std::vector<int>{1, 2, 3});
  }
  CHECK(w.deferred() == 1);
  w.settle(6);
  CHECK(w.deferred() == 0);
  CHECK(order.size() == 4);
}

TEST_CASE("close workers: over_limit starts the oldest deferred jobs early") {
  std::atomic<bool> full{false};
  std::mutex mu;
  std::vector<int> order;
  CloseWorkers w(deferring(1h, [&] { return full.load(); }));
  for (int i = 0; i < 10; ++i)
    w.post(
        100 + i,
        [&, i] {
          std::lock_guard<std::mutex> l(mu);
          order.push_back(i);
        },
        true);
  std::this_thread::sleep_for(150ms);
  CHECK(w.deferred() == 10);
  full = true;  // noticed within the 100 ms recheck, without a post
  for (int i = 0; i < 2000 && w.deferred() > 0; ++i) std::this_thread::sleep_for(1ms);
  CHECK(w.deferred() == 0);
  w.drain();
  std::lock_guard<std::mutex> l(mu);
  // (Taken oldest first; in what order they then run is the scheduler's.)
  CHECK(order.size() == 10);
}

TEST_CASE("close workers: cancel drops an inode's jobs only while all are deferred and agreed") {
  CloseWorkers w(deferring(1h));
  std::atomic<int> ran{0};
  w.post(
      1, [&] { ++ran; }, true);
  w.post(
      1, [&] { ++ran; }, true);
  CHECK_FALSE(w.cancel(1, [] { return false; }));  // the owner says no
  CHECK(w.deferred() == 2);
  bool asked = false;
  CHECK(w.cancel(1, [&] { return asked = true; }));
  CHECK(asked);
  CHECK(w.deferred() == 0);
  CHECK(w.pending() == 0);
  CHECK_FALSE(w.cancel(1, [] { return true; }));  // nothing left of it
  w.drain();                                      // returns: the dropped ones count as done
  CHECK(ran == 0);

  // One of its jobs already queued to run: the deferred rest must run too.
  std::atomic<bool> release{false};
  w.post(2, [&] {
    while (!release) std::this_thread::sleep_for(1ms);
    ++ran;
  });
  w.post(
      2, [&] { ++ran; }, true);
  for (int i = 0; i < 100 && w.pending() == 2 && w.deferred() == 1; ++i)
    std::this_thread::sleep_for(1ms);
  CHECK_FALSE(w.cancel(2, [] { return true; }));
  release = true;
  w.drain();
  CHECK(ran == 2);
}

TEST_CASE("close workers: has_jobs tells whether an inode has a job deferred, queued or running") {
  CloseWorkers w({.threads = 2, .delay = 10s, .over_limit = {}});
  CHECK_FALSE(w.has_jobs(1));
  w.post(
      1, [] {}, true);  // deferred
  CHECK(w.has_jobs(1));
  CHECK_FALSE(w.has_jobs(2));
  std::atomic<bool> release{false}, started{false};
  w.post(2, [&] {
    started = true;
    while (!release) std::this_thread::sleep_for(1ms);
  });
  while (!started) std::this_thread::sleep_for(1ms);
  CHECK(w.has_jobs(2));  // running
  release = true;
  w.drain();
  CHECK_FALSE(w.has_jobs(1));
  CHECK_FALSE(w.has_jobs(2));
}

TEST_CASE("close workers: deferred jobs due close together start together, the oldest not early") {
  using Clock = std::chrono::steady_clock;
  std::mutex mu;
  std::map<int, Clock::time_point> ran;
  auto job = [&](int i) {
    return [&, i] {
      std::lock_guard<std::mutex> l(mu);
      ran[i] = Clock::now();
    };
  };
  // delay 160 ms: jobs due within 20 ms after the oldest go with it.
  CloseWorkers w(deferring(160ms));
  auto t0 = Clock::now();
  w.post(1, job(1), true);
  std::this_thread::sleep_for(10ms);
  auto t1 = Clock::now();
  w.post(2, job(2), true);
  for (int i = 0; i < 3000 && w.pending() > 0; ++i) std::this_thread::sleep_for(1ms);
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(ran.size() == 2);
  CHECK(ran[1] - t0 >= 160ms);
  if (t1 - t0 < 18ms)  // else the machine was too slow to post them close together
    CHECK(ran[2] - t1 < 160ms);
}

}  // namespace
}  // namespace strata::fuse
