// CloseWorkers (plugins/frontends/fuse/close_workers.h): one inode's jobs run
// in order and never two at once; drain() waits for everything posted
// before it; a waiting job holds up only its own inode; settle(ino) runs
// that inode's jobs ahead of a backlog and waits for them alone.
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

}  // namespace
}  // namespace strata::fuse
