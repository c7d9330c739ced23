// An open image's write-back (image/write_back.h) against a real cluster:
// plain writes are answered before they land, and what comes after an
// answer sees the write; FUA and a budget of 0 answer only what landed; a
// failed early-answered write is reported by the next flush and by close.
#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <random>

#include "image_test_support.h"
#include "strata/client.h"

using namespace imagetest;
using strata::rbd::OpenOptions;

namespace {
constexpr uint32_t kObj = 65536;

// Starts a plain write; true when it was answered before write() returned
// (so before it could have landed: completions come from the client's
// threads). *rc gets the answer.
bool write_answered_at_once(strata::rbd::Image &img, uint64_t off, const std::string &data,
                            std::atomic<int> *rc) {
  std::atomic<bool> answered{false};
  *rc = -1000;
  img.write(off, data.size(), data.data(), false, [&answered, rc](int r) {
    *rc = r;
    answered = true;
  });
  return answered;
}

}  // namespace

TEST_CASE("write-back: reads and writes after an early answer see the write", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("wb_order");
  p.store->create("w", {16 * kObj, kObj});
  auto img = p.open("w");
  std::string model(16 * kObj, '\0');
  std::mt19937 rng(7);
  int early = 0;
  for (int i = 0; i < 200; ++i) {
    // Ranges that often overlap the last few writes and cross objects.
    const uint64_t off = rng() % (4 * kObj);
    const uint64_t len = 1 + rng() % (2 * kObj);
    std::string data = pattern(len, i);
    std::atomic<int> rc;
    if (write_answered_at_once(*img, off, data, &rc)) ++early;
    data.assign(data.size(), 'x');  // the writer's buffer is free once answered
    model.replace(off, len, pattern(len, i));
    if (i % 10 == 9) {
      // Read right behind the answer, while the write may still fly.
      std::string got;
      REQUIRE(read_sync(*img, 0, 6 * kObj, &got) == 0);
      CHECK(first_difference(got, model.substr(0, 6 * kObj)) == -1);
    }
  }
  CHECK(early > 150);  // the budget (32 MiB) holds them all
  CHECK(flush_sync(*img) == 0);
  std::string all;
  REQUIRE(read_sync(*img, 0, 16 * kObj, &all) == 0);
  CHECK(first_difference(all, model) == -1);
  REQUIRE(img->close() == 0);

  // Reopened: every write had landed (the flush said so).
  auto again = p.open("w");
  REQUIRE(read_sync(*again, 0, 16 * kObj, &all) == 0);
  CHECK(first_difference(all, model) == -1);
  REQUIRE(again->close() == 0);
}

TEST_CASE("write-back: a clone's early-answered write is read back, not its parent's data",
          "[rbd][image]") {
  // A clone's first write to an object copies the parent's up on a worker
  // thread before writing: a read overtaking it would read through to the
  // parent. The ordering makes it wait.
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("wb_clone");
  p.store->create("parent", {8 * kObj, kObj});
  {
    auto parent = p.open("parent");
    REQUIRE(write_sync(*parent, 0, pattern(8 * kObj, 1)) == 0);
    REQUIRE(parent->close() == 0);
  }
  p.store->snap_create("parent", "s");
  p.store->clone("parent", "s", *p.store, "child");
  auto child = p.open("child");
  std::string model = pattern(8 * kObj, 1);
  int early = 0;
  for (int i = 0; i < 8; ++i) {
    const uint64_t off = uint64_t(i) * kObj + 100;
    const std::string data = pattern(1000, 10 + i);
    std::atomic<int> rc;
    if (write_answered_at_once(*child, off, data, &rc)) ++early;
    model.replace(off, data.size(), data);
    std::string got;
    REQUIRE(read_sync(*child, uint64_t(i) * kObj, kObj, &got) == 0);
    CHECK(first_difference(got, model.substr(uint64_t(i) * kObj, kObj)) == -1);
  }
  CHECK(early == 8);
  CHECK(flush_sync(*child) == 0);
  REQUIRE(child->close() == 0);
}

TEST_CASE("write-back: the budget bounds early answers; FUA and a budget of 0 wait",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("wb_budget");
  p.store->create("b", {16 * kObj, kObj});
  {
    OpenOptions o;
    o.writeback_max_bytes = kObj;  // one object's worth
    auto img = p.open("b", o);
    const std::string data = pattern(kObj, 3);
    std::vector<std::atomic<int>> rcs(8);
    int at_once = 0;
    for (int i = 0; i < 8; ++i)
      if (write_answered_at_once(*img, uint64_t(i) * kObj, data, &rcs[i])) ++at_once;
    // The first fits; the rest wait for room (unless earlier ones landed
    // already, which a real cluster is too slow for between two calls).
    CHECK(at_once >= 1);
    CHECK(at_once < 8);
    CHECK(flush_sync(*img) == 0);
    for (auto &rc : rcs) CHECK(rc == 0);
    std::string got;
    REQUIRE(read_sync(*img, 0, 8 * kObj, &got) == 0);
    for (int i = 0; i < 8; ++i) CHECK(got.substr(i * kObj, kObj) == data);
    REQUIRE(img->close() == 0);
  }
  {
    OpenOptions o;
    o.writeback_max_bytes = 0;
    auto img = p.open("b", o);
    std::atomic<int> rc;
    CHECK_FALSE(write_answered_at_once(*img, 0, pattern(100, 4), &rc));
    CHECK(flush_sync(*img) == 0);
    CHECK(rc == 0);
    REQUIRE(img->close() == 0);
  }
}

TEST_CASE("write-back: a failed early-answered write fails the next flush and close",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("wb_fail");
  p.store->create("f", {8 * kObj, kObj});
  auto img = p.open("f");
  REQUIRE(write_sync(*img, 0, pattern(kObj, 1)) == 0);
  // The pool goes away under the open image: the write is answered (it
  // could not know yet), the flush after it reports the failure.
  strata_cluster_t other = shared_cluster().connect();
  REQUIRE(strata_pool_delete(other, "wb_fail") == 0);
  strata_cluster_shutdown(other);
  std::atomic<int> rc;
  CHECK(write_answered_at_once(*img, kObj, pattern(kObj, 2), &rc));
  CHECK(rc == 0);
  const int frc = flush_sync(*img);
  CHECK(frc < 0);
  CHECK(flush_sync(*img) == 0);  // reported once
  CHECK(img->last_error().find("wb_fail/f") != std::string::npos);
  CHECK(img->close() == frc);
}
