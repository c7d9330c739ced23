// The contract of map() in placement.h: deterministic, distinct devices,
// failure domains, never a device that cannot hold data, the documented
// errors, and a map that is copied at create().
#include <cerrno>

#include "kit.h"
#include "placement_checks.h"

namespace strata::conformance {
namespace {

constexpr uint32_t kInputs = 2000;

TEST_CASE("placement: the descriptor and vtable are complete", "[placement][abi]") {
  const strata_plugin_descriptor &d = descriptor();
  CHECK(d.kind == STRATA_KIND_PLACEMENT);
  CHECK(ops_size() >= sizeof(strata_placement_ops));
  const strata_placement_ops &ops = placement_ops();
  CHECK(ops.capabilities != nullptr);
  CHECK(ops.create != nullptr);
  CHECK(ops.destroy != nullptr);
  CHECK(ops.map != nullptr);
}

TEST_CASE("placement: the same map and input give the same devices, on every handle",
          "[placement][determinism]") {
  sdk::PlacementMap m = test_cluster(3, 4, 3);
  FreshPlacement a(m);
  FreshPlacement b(m);  // a second handle, from a second copy of the arrays
  for (uint32_t rule : {kRuleHosts, kRuleRacks, kRuleDevices}) {
    Placements first = map_inputs(a, rule, 3, kInputs);
    CHECK(map_inputs(a, rule, 3, kInputs) == first);
    CHECK(map_inputs(b, rule, 3, kInputs) == first);
  }
}

TEST_CASE("placement: a result holds num_rep distinct devices when enough exist",
          "[placement][count]") {
  sdk::PlacementMap m = test_cluster(3, 4, 3);  // 12 hosts, 36 devices
  FreshPlacement p(m);
  for (uint32_t num_rep : {1u, 2u, 3u, 5u, 8u}) {
    INFO("num_rep " << num_rep);
    Placements hosts = map_inputs(p, kRuleHosts, num_rep, kInputs);
    Placements devices = map_inputs(p, kRuleDevices, num_rep, kInputs);
    for (uint32_t x = 0; x < kInputs; ++x) {
      CHECK(hosts[x].size() == num_rep);
      CHECK(devices[x].size() == num_rep);
      if (hosts[x].size() != num_rep || devices[x].size() != num_rep) break;
    }
    CHECK(first_problem(m, hosts, kTypeHost) == "");
    CHECK(first_problem(m, devices, kTypeDevice) == "");
  }
}

TEST_CASE("placement: replicas of a CHOOSELEAF rule land in distinct failure domains",
          "[placement][failure-domains]") {
  sdk::PlacementMap m = test_cluster(4, 3, 2);
  FreshPlacement p(m);
  CHECK(first_problem(m, map_inputs(p, kRuleRacks, 4, kInputs), kTypeRack) == "");
  CHECK(first_problem(m, map_inputs(p, kRuleHosts, 6, kInputs), kTypeHost) == "");
}

TEST_CASE(
    "placement: fewer failure domains than replicas give a shorter result, never a shared "
    "domain",
    "[placement][failure-domains]") {
  sdk::PlacementMap m = test_cluster(3, 2, 2);  // 3 racks
  FreshPlacement p(m);
  Placements r = map_inputs(p, kRuleRacks, 5, kInputs);
  CHECK(first_problem(m, r, kTypeRack) == "");
  for (uint32_t x = 0; x < kInputs; ++x) {
    INFO("input " << x << " -> " << describe(r[x]));
    REQUIRE(r[x].size() <= 3);
  }
}

TEST_CASE("placement: a CHOOSE count of n <= 0 means num_rep + n", "[placement][rules]") {
  sdk::PlacementMap m = test_cluster(2, 4, 2);
  m.rules.push_back({7,
                     "all but one",
                     {{STRATA_PLACEMENT_STEP_TAKE, kRootBucket, -1},
                      {STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, -1, kTypeHost},
                      {STRATA_PLACEMENT_STEP_EMIT, 0, 0}}});
  FreshPlacement p(m);
  for (uint32_t x = 0; x < 200; ++x) CHECK(p.map(7, x, 4).size() == 3);
}

TEST_CASE("placement: out devices and zero-weight devices are never chosen", "[placement][out]") {
  sdk::PlacementMap m = test_cluster(2, 3, 4);  // 24 devices
  for (int32_t id : {0, 5, 6, 7, 13}) m.devices[size_t(id)].reweight = 0;
  for (int32_t id : {1, 9, 22}) m.devices[size_t(id)].weight = 0;
  // Every device of the last host zero-weighted: the host holds nothing.
  for (int32_t id = 20; id < 24; ++id) m.devices[size_t(id)].weight = 0;
  m = with_weights_summed(std::move(m));
  FreshPlacement p(m);
  for (uint32_t rule : {kRuleHosts, kRuleRacks, kRuleDevices}) {
    INFO("rule " << rule);
    Placements r = map_inputs(p, rule, 3, kInputs);
    CHECK(first_problem(m, r,
                        rule == kRuleHosts   ? kTypeHost
                        : rule == kRuleRacks ? kTypeRack
                                             : kTypeDevice) == "");
  }
}

TEST_CASE(
    "placement: map() answers ENOENT for an unknown rule and EINVAL past the maximum "
    "count",
    "[placement][errors]") {
  FreshPlacement p(test_cluster(1, 2, 2));
  std::vector<int32_t> out(STRATA_PLACEMENT_MAX_RESULT + 1);
  CHECK(Errno(p.map_rc(99, 1, 2, out.data(), uint32_t(out.size()))) == Errno(-ENOENT));
  CHECK(Errno(p.map_rc(kRuleHosts, 1, STRATA_PLACEMENT_MAX_RESULT + 1, out.data(),
                       uint32_t(out.size()))) == Errno(-EINVAL));
}

TEST_CASE("placement: map() writes no more than the caller's capacity", "[placement][errors]") {
  FreshPlacement p(test_cluster(2, 3, 2));
  for (uint32_t x = 0; x < 200; ++x) {
    int32_t out[6] = {-7777, -7777, -7777, -7777, -7777, -7777};
    int n = p.map_rc(kRuleHosts, x, 5, out, 2);
    INFO("input " << x);
    CHECK(n >= 0);
    CHECK(n <= 2);
    for (int i = 2; i < 6; ++i) CHECK(out[i] == -7777);
  }
}

TEST_CASE("placement: create() copies the map, whose arrays may be freed afterwards",
          "[placement][create]") {
  sdk::PlacementMap m = test_cluster(2, 3, 3);
  FreshPlacement reference(m);
  auto c = std::make_unique<CPlacementMap>(m);
  FreshPlacement p(*c);
  c->scribble();
  c.reset();
  for (uint32_t rule : {kRuleHosts, kRuleDevices})
    CHECK(map_inputs(p, rule, 3, 500) == map_inputs(reference, rule, 3, 500));
}

TEST_CASE("placement: elements larger than the plugin knows are read by their declared size",
          "[placement][create]") {
  // A host of a later ABI minor appends fields to every element.
  sdk::PlacementMap m = test_cluster(2, 3, 3);
  FreshPlacement reference(m);
  CPlacementMap wide(m, 16);
  FreshPlacement p(wide);
  for (uint32_t rule : {kRuleHosts, kRuleRacks, kRuleDevices})
    CHECK(map_inputs(p, rule, 3, 500) == map_inputs(reference, rule, 3, 500));
}

TEST_CASE("placement: create() accepts a NULL host and destroy() a NULL handle",
          "[placement][create]") {
  CPlacementMap c(test_cluster(1, 3, 1));
  CreateResult r = create_placement_rc(c.get(), nullptr);
  CHECK(r.rc == 0);
  CHECK(r.handle != nullptr);
  placement_ops().destroy(r.handle);
  placement_ops().destroy(nullptr);
}

}  // namespace
}  // namespace strata::conformance
