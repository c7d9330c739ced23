// The optional rule shapes a plugin announces with STRATA_PLACEMENT_CAP_*:
// announced means honoured.
#include <algorithm>
#include <numeric>

#include "kit.h"
#include "placement_checks.h"

namespace strata::conformance {
namespace {

constexpr uint32_t kInputs = 2000;
constexpr int32_t kHdd = 0, kSsd = 1;

// True when the plugin announces every bit of `bits`; otherwise a warning
// says which case has nothing to check.
bool announces(uint64_t bits, const char *names) {
  FreshPlacement p(test_cluster(1, 1, 1));
  if ((p.caps() & bits) == bits) return true;
  WARN("the plugin does not announce " << names << "; nothing to check");
  return false;
}

// test_cluster with classes: even devices hdd, odd devices ssd.
sdk::PlacementMap classed_cluster() {
  sdk::PlacementMap m = test_cluster(2, 3, 4);
  m.class_names = {"hdd", "ssd"};
  for (sdk::PlacementDevice &d : m.devices) d.class_index = d.id % 2 ? kSsd : kHdd;
  return m;
}

TEST_CASE("placement: capabilities are the same for every handle and every call",
          "[placement][capabilities]") {
  FreshPlacement a(test_cluster(1, 2, 2));
  FreshPlacement b(test_cluster(3, 2, 1));
  CHECK(a.caps() == b.caps());
  CHECK(a.caps() == a.caps());
}

TEST_CASE("placement: a class-restricted TAKE chooses only devices of that class",
          "[placement][capabilities][classes]") {
  if (!announces(STRATA_PLACEMENT_CAP_DEVICE_CLASSES, "STRATA_PLACEMENT_CAP_DEVICE_CLASSES"))
    return;
  sdk::PlacementMap m = classed_cluster();
  m.rules.push_back({10,
                     "ssd hosts",
                     {{STRATA_PLACEMENT_STEP_TAKE, kRootBucket, kSsd},
                      {STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, 0, kTypeHost},
                      {STRATA_PLACEMENT_STEP_EMIT, 0, 0}}});
  FreshPlacement p(m);
  Placements r = map_inputs(p, 10, 3, kInputs);
  CHECK(first_problem(m, r, kTypeHost) == "");
  for (uint32_t x = 0; x < kInputs; ++x) {
    INFO("input " << x << " -> " << describe(r[x]));
    REQUIRE(r[x].size() == 3);
    for (int32_t id : r[x]) REQUIRE(id % 2 == kSsd);
  }
}

TEST_CASE("placement: several TAKE .. EMIT blocks in one rule fill the result in order",
          "[placement][capabilities][multi-take]") {
  if (!announces(STRATA_PLACEMENT_CAP_MULTI_TAKE | STRATA_PLACEMENT_CAP_DEVICE_CLASSES,
                 "STRATA_PLACEMENT_CAP_MULTI_TAKE and _DEVICE_CLASSES"))
    return;
  sdk::PlacementMap m = classed_cluster();
  m.rules.push_back({11,
                     "1 ssd + rest hdd",
                     {{STRATA_PLACEMENT_STEP_TAKE, kRootBucket, kSsd},
                      {STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, 1, kTypeHost},
                      {STRATA_PLACEMENT_STEP_EMIT, 0, 0},
                      {STRATA_PLACEMENT_STEP_TAKE, kRootBucket, kHdd},
                      {STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, -1, kTypeHost},
                      {STRATA_PLACEMENT_STEP_EMIT, 0, 0}}});
  FreshPlacement p(m);
  Placements r = map_inputs(p, 11, 3, kInputs);
  CHECK(first_problem(m, r, kTypeDevice) == "");
  for (uint32_t x = 0; x < kInputs; ++x) {
    INFO("input " << x << " -> " << describe(r[x]));
    REQUIRE(r[x].size() == 3);
    CHECK(r[x][0] % 2 == kSsd);
    CHECK(r[x][1] % 2 == kHdd);
    CHECK(r[x][2] % 2 == kHdd);
  }
}

TEST_CASE("placement: chained CHOOSE steps pick items inside the items chosen before",
          "[placement][capabilities][chained]") {
  if (!announces(STRATA_PLACEMENT_CAP_CHAINED_CHOOSE, "STRATA_PLACEMENT_CAP_CHAINED_CHOOSE"))
    return;
  sdk::PlacementMap m = test_cluster(3, 3, 2);
  m.rules.push_back({12,
                     "2 racks, 2 hosts each",
                     {{STRATA_PLACEMENT_STEP_TAKE, kRootBucket, -1},
                      {STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN, 2, kTypeRack},
                      {STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, 2, kTypeHost},
                      {STRATA_PLACEMENT_STEP_EMIT, 0, 0}}});
  FreshPlacement p(m);
  Placements r = map_inputs(p, 12, 4, kInputs);
  CHECK(first_problem(m, r, kTypeHost) == "");
  for (uint32_t x = 0; x < kInputs; ++x) {
    INFO("input " << x << " -> " << describe(r[x]));
    REQUIRE(r[x].size() == 4);
    std::vector<int32_t> racks;
    for (int32_t id : r[x]) racks.push_back(ancestor_of(m, id, kTypeRack));
    // Two devices in each of two different racks.
    std::sort(racks.begin(), racks.end());
    CHECK(racks[0] == racks[1]);
    CHECK(racks[2] == racks[3]);
    CHECK(racks[1] != racks[2]);
  }
}

TEST_CASE("placement: a reweight below 1.0 sheds that share of the device's data",
          "[placement][capabilities][reweight]") {
  if (!announces(STRATA_PLACEMENT_CAP_REWEIGHT, "STRATA_PLACEMENT_CAP_REWEIGHT")) return;
  sdk::PlacementMap m = test_cluster(1, 1, 10);
  m.devices[0].reweight = STRATA_PLACEMENT_WEIGHT_ONE / 2;
  FreshPlacement p(m);
  std::vector<uint64_t> counts = device_counts(map_inputs(p, kRuleDevices, 1, 20000), 10);
  double unit = static_cast<double>(std::accumulate(counts.begin() + 1, counts.end(), 0ull)) / 9;
  INFO("device 0 (reweight 0.5) holds " << counts[0] << ", the others " << unit << " on average");
  CHECK(counts[0] > 0.3 * unit);
  CHECK(counts[0] < 0.7 * unit);
}

}  // namespace
}  // namespace strata::conformance
