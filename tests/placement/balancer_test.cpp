// The balancer: ±1 PG of each device's share with few exceptions, and
// after a topology change, movement close to the optimal amount.
#include <cmath>
#include <map>
#include <set>

#include "placement/analysis.h"
#include "placement/balancer.h"
#include "placement/pool_mapping.h"
#include "placement/target_shares.h"
#include "placement/topology.h"
#include "placement_test_support.h"

using namespace placement_test;

namespace {

constexpr uint32_t kPgs = 3334;  // 10 x 10 devices, ~100 PG replicas each

struct Balanced {
  PlacementMap map;
  BalanceReport report;
};

Balanced run_balance(const PlacementMap &m, const PoolMapping *previous) {
  Placer p = make_placer("crush", m);
  BalanceOptions opt;
  opt.pool = {1, kPgs, 0, 3};
  BalanceReport r;
  auto out = balance(p, m, opt, previous, &r);
  INFO(out.status().message());
  REQUIRE(out.ok());
  return {out.value(), r};
}

// Effective mapping of the pool, computed afresh from the map (the way
// every client will), plus checks that hold for any balanced result.
PoolMapping check_within_one_pg(const PlacementMap &m) {
  Placer p = make_placer("crush", m);
  Topology topo(m);
  auto pm = map_pool(p, topo, {1, kPgs, 0, 3});
  REQUIRE(pm.ok());
  std::map<int32_t, int> count;
  for (const auto &r : pm.value().effective) {
    REQUIRE(r.size() == 3);
    std::set<int32_t> hosts;
    for (int32_t d : r) {
      ++count[d];
      hosts.insert(topo.parent(d));
    }
    REQUIRE(hosts.size() == 3);
  }
  for (const auto &[d, share] : expected_replicas_per_input(topo, m.rules[0], 3)) {
    INFO("device " << d << " count " << count[d] << " share " << share * kPgs);
    CHECK(std::fabs(count[d] - share * kPgs) <= 1.0);
  }
  return std::move(pm.value());
}

PlacementMap add_device_to_host0(PlacementMap m) {
  m.devices.push_back(Device{100, "osd.100", kWeightOne, "", kWeightOne, false});
  m.buckets[1].items.push_back(100);  // buckets[0] is the root, [1] host0
  return m;
}

}  // namespace

TEST_CASE("the balancer brings a 10x10 map with 100 PGs per device within one PG of every share") {
  PlacementMap m = hosts_map(10, 10);
  Balanced b = run_balance(m, nullptr);
  CHECK(b.report.deviation_before > 10);
  CHECK(b.report.deviation_after <= 1.0);
  check_within_one_pg(b.map);
  // Few exceptions: one per move, and far fewer than the PGs.
  CHECK(b.report.exceptions_after == b.report.moves);
  CHECK(b.report.exceptions_after < kPgs / 5);
  CHECK(b.report.replicas_moved == b.report.moves);
}

TEST_CASE("balancing an already balanced map changes nothing") {
  Balanced once = run_balance(hosts_map(10, 10), nullptr);
  Balanced twice = run_balance(once.map, nullptr);
  CHECK(twice.report.moves == 0);
  CHECK(twice.report.replicas_moved == 0);
  CHECK(twice.map.exceptions == once.map.exceptions);
}

TEST_CASE("after adding a device, balancing from the old map moves little more than optimal") {
  Balanced old = run_balance(hosts_map(10, 10), nullptr);
  PoolMapping before = check_within_one_pg(old.map);
  PlacementMap grown = add_device_to_host0(old.map);
  Balanced b = run_balance(grown, &before);
  check_within_one_pg(b.map);
  Topology t_old(old.map), t_new(b.map);
  double optimal = optimal_movement(expected_replicas_per_input(t_old, old.map.rules[0], 3),
                                    expected_replicas_per_input(t_new, b.map.rules[0], 3));
  double moved = double(b.report.replicas_moved) / double(b.report.replicas);
  INFO("moved " << moved << " optimal " << optimal);
  CHECK(moved <= 1.1 * optimal);
}

TEST_CASE("after adding a host, balancing from the old map moves little more than optimal") {
  Balanced old = run_balance(hosts_map(10, 10), nullptr);
  PoolMapping before = check_within_one_pg(old.map);
  PlacementMap grown = old.map;
  Bucket host;
  host.id = -100;
  host.name = "host10";
  host.type = grown.type_by_name("host")->id;
  for (int32_t id = 100; id < 110; ++id) {
    grown.devices.push_back(Device{id, "osd." + std::to_string(id), kWeightOne, "", kWeightOne, false});
    host.items.push_back(id);
  }
  grown.buckets.push_back(host);
  grown.buckets[0].items.push_back(-100);
  Balanced b = run_balance(grown, &before);
  check_within_one_pg(b.map);
  Topology t_old(old.map), t_new(b.map);
  double optimal = optimal_movement(expected_replicas_per_input(t_old, old.map.rules[0], 3),
                                    expected_replicas_per_input(t_new, b.map.rules[0], 3));
  double moved = double(b.report.replicas_moved) / double(b.report.replicas);
  INFO("moved " << moved << " optimal " << optimal);
  CHECK(moved <= 1.1 * optimal);
}
