// Large maps, and map() from many threads on one handle (placement.h:
// "map(): any number of threads concurrently on one handle").
#include <thread>

#include "kit.h"
#include "placement_checks.h"

namespace strata::conformance {
namespace {

TEST_CASE("placement: a map of 4,000 devices keeps every promise", "[placement][large]") {
  sdk::PlacementMap m = test_cluster(8, 25, 20);
  FreshPlacement p(m);
  Placements r = map_inputs(p, kRuleHosts, 3, 5000);
  CHECK(first_problem(m, r, kTypeHost) == "");
  size_t short_results = 0;
  for (const std::vector<int32_t> &one : r) short_results += one.size() != 3;
  CHECK(short_results == 0);
  CHECK(first_problem(m, map_inputs(p, kRuleRacks, 3, 5000), kTypeRack) == "");
}

TEST_CASE("placement: map() from several threads on one handle gives the serial answers",
          "[placement][concurrency]") {
  sdk::PlacementMap m = test_cluster(3, 4, 4);
  FreshPlacement p(m);
  constexpr uint32_t kInputs = 3000;
  const Placements serial = map_inputs(p, kRuleHosts, 3, kInputs);
  constexpr int kThreads = 4;
  std::vector<Placements> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // Every thread walks the inputs from a different start, so that
      // different inputs are in flight at once.
      Placements mine(kInputs);
      for (uint32_t i = 0; i < kInputs; ++i) {
        uint32_t x = (i + static_cast<uint32_t>(t) * 757) % kInputs;
        std::vector<int32_t> out(STRATA_PLACEMENT_MAX_RESULT);
        int n = p.map_rc(kRuleHosts, x, 3, out.data(), static_cast<uint32_t>(out.size()));
        out.resize(n < 0 ? 0 : static_cast<size_t>(n));
        mine[x] = std::move(out);
      }
      got[static_cast<size_t>(t)] = std::move(mine);
    });
  for (std::thread &t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(got[static_cast<size_t>(t)] == serial);
  }
}

}  // namespace
}  // namespace strata::conformance
