// Placement that holds still: a small change of the map moves a share of
// the data close to the share of weight that changed, and weights decide
// how much each device holds.
#include <algorithm>
#include <numeric>

#include "kit.h"
#include "placement_checks.h"

namespace strata::conformance {
namespace {

constexpr uint32_t kInputs = 6000;

// A generous multiple of the ideal movement: straw2/rendezvous style
// algorithms stay within it, while rehashing everything (mod n) moves
// nearly all replicas and fails by far.
constexpr double kMovementSlack = 3.0;

TEST_CASE("placement: adding one device moves about its share of the replicas",
          "[placement][stability]") {
  sdk::PlacementMap before = test_cluster(2, 4, 3);  // 24 devices
  sdk::PlacementMap after = before;
  int32_t new_id = static_cast<int32_t>(after.devices.size());
  after.devices.push_back({new_id, -1, STRATA_PLACEMENT_WEIGHT_ONE, STRATA_PLACEMENT_WEIGHT_ONE});
  after.buckets.back().items.push_back(new_id);  // into the last host
  after = with_weights_summed(std::move(after));
  FreshPlacement a(before), b(after);
  const double ideal = 1.0 / 25;
  for (uint32_t rule : {kRuleDevices, kRuleHosts}) {
    double moved = moved_share(map_inputs(a, rule, 3, kInputs), map_inputs(b, rule, 3, kInputs));
    INFO("rule " << rule << ": " << moved * 100 << "% of replicas moved, ideal " << ideal * 100
                 << "%");
    CHECK(moved > 0);
    CHECK(moved <= kMovementSlack * ideal);
  }
}

TEST_CASE("placement: marking one device out moves about its share of the replicas",
          "[placement][stability]") {
  sdk::PlacementMap before = test_cluster(2, 4, 3);
  sdk::PlacementMap after = before;
  after.devices[5].reweight = 0;
  FreshPlacement a(before), b(after);
  const double ideal = 1.0 / 24;
  for (uint32_t rule : {kRuleDevices, kRuleHosts}) {
    Placements old_r = map_inputs(a, rule, 3, kInputs);
    Placements new_r = map_inputs(b, rule, 3, kInputs);
    double moved = moved_share(old_r, new_r);
    INFO("rule " << rule << ": " << moved * 100 << "% of replicas moved, ideal " << ideal * 100
                 << "%");
    CHECK(moved <= kMovementSlack * ideal);
    CHECK(device_counts(new_r, 24)[5] == 0);
  }
}

TEST_CASE("placement: devices hold data in proportion to their weight", "[placement][weights]") {
  // One flat host of 10 devices: device 0 weighs 2.0, device 1 weighs 0.5.
  sdk::PlacementMap m = test_cluster(1, 1, 10);
  m.devices[0].weight = 2 * STRATA_PLACEMENT_WEIGHT_ONE;
  m.devices[1].weight = STRATA_PLACEMENT_WEIGHT_ONE / 2;
  m = with_weights_summed(std::move(m));
  FreshPlacement p(m);
  std::vector<uint64_t> counts = device_counts(map_inputs(p, kRuleDevices, 1, 20000), 10);
  double unit = static_cast<double>(std::accumulate(counts.begin() + 2, counts.end(), 0ull)) / 8;
  INFO("per-device counts: weight 2.0 -> " << counts[0] << ", 0.5 -> " << counts[1]
                                           << ", mean of the 1.0 devices " << unit);
  CHECK(counts[0] > 1.6 * unit);
  CHECK(counts[0] < 2.4 * unit);
  CHECK(counts[1] > 0.3 * unit);
  CHECK(counts[1] < 0.7 * unit);
}

}  // namespace
}  // namespace strata::conformance
