// Reads run on many host threads while the one apply thread writes.
// Catch2 assertions are not thread-safe: worker threads count problems and
// the test thread checks the counts.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "kit.h"

namespace {
using namespace strata::conformance;

TEST_CASE("readers on several threads see stable objects unchanged while transactions apply",
          "[backend][concurrency]") {
  FreshStore s;
  constexpr int kStable = 20;
  TxnBuilder setup;
  setup.mkcoll("stable").mkcoll("busy");
  for (int i = 0; i < kStable; ++i) {
    std::string o = "s" + std::to_string(i);
    setup.write("stable", o, 0, pattern_bytes(50000 + i, i))
        .setxattr("stable", o, "x", std::to_string(i))
        .omap_set("stable", o, "k", std::to_string(i));
  }
  s.apply(setup);

  std::atomic<bool> done{false};
  std::atomic<int> mismatches{0}, errors{0}, reads{0};
  std::mutex first_mu;
  std::string first_problem;  // GUARDED_BY(first_mu)
  auto problem = [&](std::atomic<int> &counter, const std::string &what) {
    if (counter.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(first_mu);
      if (first_problem.empty()) first_problem = what;
    }
  };
  auto reader = [&](int id) {
    for (int round = 0; !done.load() || round < 5; ++round) {
      int i = (round * 7 + id) % kStable;
      std::string o = "s" + std::to_string(i);
      try {
        if (s.read_all("stable", o) != pattern_bytes(50000 + i, i))
          problem(mismatches, "data of " + o);
        if (s.getxattr("stable", o, "x") != std::to_string(i)) problem(mismatches, "xattr of " + o);
        if (s.omap("stable", o) != KvList{{"k", std::to_string(i)}})
          problem(mismatches, "omap of " + o);
        if (s.list_objects("stable").size() != kStable) problem(mismatches, "listing");
        s.list_collections();
        reads.fetch_add(1);
      } catch (const std::exception &e) {
        problem(errors, e.what());
      }
    }
  };
  std::vector<std::thread> readers;
  for (int id = 0; id < 4; ++id) readers.emplace_back(reader, id);
  for (int t = 0; t < 200; ++t) {
    std::string o = "b" + std::to_string(t % 17);
    s.apply(TxnBuilder()
                .write("busy", o, (t % 5) * 10000, pattern_bytes(20000, 1000 + t))
                .setxattr("busy", o, "t", std::to_string(t))
                .omap_set("busy", o, "k" + std::to_string(t), "v")
                .truncate("busy", "b-trunc", t * 100));
    if (t % 50 == 49) s.checkpoint();
  }
  done = true;
  for (std::thread &r : readers) r.join();
  INFO("first problem: " << first_problem);
  CHECK(mismatches.load() == 0);
  CHECK(errors.load() == 0);
  CHECK(reads.load() >= 20);
  CHECK(s.list_objects("busy").size() == 18);
}

TEST_CASE("interleaved transactions on different objects all land", "[backend][concurrency]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c"));
  constexpr int kObjects = 10, kRounds = 30;
  for (int r = 0; r < kRounds; ++r)
    for (int o = 0; o < kObjects; ++o)
      s.apply(TxnBuilder()
                  .write("c", "o" + std::to_string(o), r * 1000, pattern_bytes(1000, o * 100 + r))
                  .omap_set("c", "o" + std::to_string(o), "r" + std::to_string(100 + r), "x"));
  for (int o = 0; o < kObjects; ++o) {
    std::string expect;
    for (int r = 0; r < kRounds; ++r) expect += pattern_bytes(1000, o * 100 + r);
    INFO("object o" << o);
    CHECK(same_bytes(s.read_all("c", "o" + std::to_string(o)), expect));
    CHECK(s.omap("c", "o" + std::to_string(o)).size() == kRounds);
  }
}

}  // namespace
