// The shard's use of WorkQueue::run_or_post: events run one at a time, in
// order, inline on the caller when the shard is idle. (In osd_unit_tests: a
// shard owns PGs, so this links the whole OSD; ConnOrder and RepWrite, which
// do not, are in osd_order_tests with the sanitizers.)
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "osd/osd_shard.h"

using namespace strata::osd;

namespace {

struct Log {
  std::mutex mu;
  std::vector<int> seen;
  void add(int v) {
    std::lock_guard lk(mu);
    seen.push_back(v);
  }
  std::vector<int> get() {
    std::lock_guard lk(mu);
    return seen;
  }
};

}  // namespace

TEST_CASE(
    "an idle shard runs an event on the caller's thread, a busy one on its own after the rest") {
  // The queue's own guarantees are tested with WorkQueue (tests/core); this
  // is the shard's use of them.
  OsdShard shard(0);
  shard.start();
  std::thread::id ran_on;
  std::atomic<bool> done{false};
  shard.run_or_post([&] {
    ran_on = std::this_thread::get_id();
    done = true;
  });
  REQUIRE(done);  // ran inline, before run_or_post returned
  CHECK(ran_on == std::this_thread::get_id());

  std::atomic<bool> release{false}, held{false};
  shard.post([&] {
    held = true;
    while (!release) std::this_thread::yield();
  });
  while (!held) std::this_thread::yield();
  Log log;
  std::atomic<bool> flushed{false};
  shard.post([&] { log.add(1); });
  shard.run_or_post([&] {
    ran_on = std::this_thread::get_id();
    log.add(2);
    flushed = true;
  });
  CHECK(log.get().empty());  // queued behind the busy event
  release = true;
  while (!flushed) std::this_thread::yield();
  shard.stop();
  CHECK(log.get() == std::vector<int>{1, 2});
  CHECK(ran_on != std::this_thread::get_id());
}
