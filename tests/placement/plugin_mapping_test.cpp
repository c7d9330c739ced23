// Behaviour of every placement plugin (crush, rendezvous) through the host:
// determinism, failure domains, balance, minimal movement, classes,
// reweights and rule shapes.
#include <algorithm>
#include <set>
#include <thread>

#include "placement/analysis.h"
#include "placement/topology.h"
#include "placement_test_support.h"

using namespace placement_test;

namespace {

std::vector<int32_t> map_x(const Placer &p, uint32_t x, uint32_t num_rep = 3, uint32_t rule = 0) {
  auto r = p.map(rule, x, num_rep);
  REQUIRE(r.ok());
  return r.value();
}

std::set<int32_t> as_set(const std::vector<int32_t> &v) { return {v.begin(), v.end()}; }

// A flat map: one root holding `n` devices directly; rule 0 chooses devices.
PlacementMap flat_map(int n) {
  std::string text = "type 0 device\ntype 1 root\n";
  for (int i = 0; i < n; ++i)
    text += "device " + std::to_string(i) + " osd." + std::to_string(i) + " weight 1\n";
  text += "root default {\n";
  for (int i = 0; i < n; ++i) text += "  osd." + std::to_string(i) + "\n";
  text += "}\nrule flat {\n  take default\n  choose firstn 0 type device\n  emit\n}\n";
  return parse_ok(text);
}

double largest_deviation(const std::string &plugin, const PlacementMap &m) {
  Placer p = make_placer(plugin, m);
  Topology topo(m);
  Utilization u = measure_utilization(topo, m.rules[0], 3, 100000, [&](uint64_t i, std::vector<int32_t> &out) {
    out = map_x(p, uint32_t(i));
  });
  CHECK(u.short_results == 0);
  CHECK(u.domain_violations == 0);
  return std::max(u.max_deviation, -u.min_deviation);
}

}  // namespace

TEST_CASE("the same map and input give the same devices on every run and machine") {
  // Pinned results: any change to the hash, the log table or the descent
  // shows up here, because it would move data on a live cluster.
  PlacementMap m = hosts_map(10, 10);
  struct Pinned {
    const char *plugin;
    uint32_t x;
    std::vector<int32_t> devices;
  };
  const std::vector<Pinned> pinned = {
      {"crush", 0u, {31, 41, 13}},
      {"crush", 1u, {70, 40, 98}},
      {"crush", 2u, {53, 10, 33}},
      {"crush", 3u, {41, 32, 17}},
      {"crush", 42u, {20, 89, 48}},
      {"crush", 1000u, {76, 48, 94}},
      {"crush", 99999u, {14, 84, 45}},
      {"crush", 4294967295u, {71, 86, 42}},
      {"rendezvous", 0u, {62, 9, 92}},
      {"rendezvous", 1u, {13, 88, 38}},
      {"rendezvous", 2u, {33, 83, 21}},
      {"rendezvous", 3u, {17, 27, 52}},
      {"rendezvous", 42u, {48, 60, 57}},
      {"rendezvous", 1000u, {25, 56, 31}},
      {"rendezvous", 99999u, {9, 57, 14}},
      {"rendezvous", 4294967295u, {95, 42, 5}}
  };
  for (const std::string &plugin : all_plugins()) {
    Placer p = make_placer(plugin, m);
    for (const Pinned &e : pinned)
      if (plugin == e.plugin) {
        INFO(plugin << " x=" << e.x);
        CHECK(map_x(p, e.x) == e.devices);
      }
  }
}

TEST_CASE("separate instances and concurrent threads agree on every mapping") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(6, 5);
  Placer a = make_placer(plugin, m), b = make_placer(plugin, m);
  constexpr uint32_t kInputs = 20000;
  std::vector<std::vector<int32_t>> one(kInputs), two(kInputs);
  for (uint32_t x = 0; x < kInputs; ++x) one[x] = map_x(a, x);
  auto worker = [&](uint32_t start) {
    for (uint32_t x = start; x < kInputs; x += 2) {
      int32_t buf[8];
      int n = b.map(0, x, 3, buf, 8);
      two[x].assign(buf, buf + std::max(n, 0));
    }
  };
  std::thread t1(worker, 0), t2(worker, 1);
  t1.join();
  t2.join();
  CHECK(one == two);
}

TEST_CASE("no input maps two replicas to one host over a million inputs, with devices out") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(10, 10);
  for (int32_t id : {5, 15, 16, 47, 99}) m.devices[size_t(id)].out = true;
  m.devices[33].reweight = kWeightOne / 4;
  Topology topo(m);
  std::vector<int32_t> host_of(m.devices.size());
  for (const Device &d : m.devices) host_of[size_t(d.id)] = topo.parent(d.id);
  Placer p = make_placer(plugin, m);

  // crush over a million inputs; rendezvous (O(devices) per mapping) over
  // a quarter of that to keep the test quick.
  const uint32_t kInputs = plugin == "crush" ? 1000000 : 250000;
  uint64_t bad[2] = {0, 0}, short_results[2] = {0, 0}, on_out[2] = {0, 0};
  auto worker = [&](int t) {
    int32_t buf[8];
    for (uint32_t x = uint32_t(t); x < kInputs; x += 2) {
      int n = p.map(0, x, 3, buf, 8);
      if (n != 3) ++short_results[t];
      for (int i = 0; i < n; ++i) {
        if (m.devices[size_t(buf[i])].out) ++on_out[t];
        for (int j = 0; j < i; ++j)
          if (host_of[size_t(buf[i])] == host_of[size_t(buf[j])]) ++bad[t];
      }
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  CHECK(bad[0] + bad[1] == 0);
  CHECK(on_out[0] + on_out[1] == 0);
  CHECK(short_results[0] + short_results[1] == 0);
}

TEST_CASE("equal devices are within 5% of their share and mixed sizes within 8%") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  INFO(plugin);
  CHECK(largest_deviation(plugin, hosts_map(3, 4)) <= 0.05);
  CHECK(largest_deviation(plugin, hosts_map(10, 10)) <= 0.05);
  CHECK(largest_deviation(plugin, hosts_map(10, 10, {kWeightOne, 2 * kWeightOne, 4 * kWeightOne})) <=
        0.08);
}

TEST_CASE("changing one device's weight moves data only to or from that device") {
  // The straw2 property, per draw: with one replica every changed input
  // moved to or from the device. With several replicas every changed input
  // has the device in its old or new set.
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap before = flat_map(20);
  for (Weight w : {2 * kWeightOne, kWeightOne / 2, Weight(0)}) {
    PlacementMap after = before;
    after.devices[7].weight = w;
    Placer a = make_placer(plugin, before), b = make_placer(plugin, after);
    uint64_t changed = 0;
    for (uint32_t x = 0; x < 20000; ++x) {
      INFO(plugin << " x=" << x);
      std::vector<int32_t> o1 = map_x(a, x, 1), n1 = map_x(b, x, 1);
      if (o1 != n1) {
        ++changed;
        CHECK((o1[0] == 7 || n1[0] == 7));
      }
      std::set<int32_t> o = as_set(map_x(a, x)), n = as_set(map_x(b, x));
      if (o != n) CHECK((o.count(7) + n.count(7)) > 0);
    }
    CHECK(changed > 0);
  }
}

TEST_CASE("in a hierarchy a device's weight change only moves inputs that touch its host") {
  PlacementMap before = hosts_map(10, 10);
  PlacementMap after = before;
  after.devices[7].weight = 3 * kWeightOne;  // osd.7 is in host0
  Topology topo(before);
  Placer a = make_placer("crush", before), b = make_placer("crush", after);
  for (uint32_t x = 0; x < 20000; ++x) {
    std::vector<int32_t> o = map_x(a, x), n = map_x(b, x);
    if (as_set(o) == as_set(n)) continue;
    bool touches = false;
    for (int32_t d : o) touches |= topo.parent(d) == topo.parent(7);
    for (int32_t d : n) touches |= topo.parent(d) == topo.parent(7);
    INFO("x=" << x);
    CHECK(touches);
  }
}

TEST_CASE("a class-restricted rule maps only to devices of that class") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(5, 4);
  for (Device &d : m.devices) d.device_class = d.id % 2 ? "ssd" : "hdd";
  Rule ssd = m.rules[0];
  ssd.id = 1;
  ssd.name = "ssd";
  ssd.steps[0].device_class = "ssd";
  m.rules.push_back(ssd);
  Placer p = make_placer(plugin, m);
  std::map<int32_t, int> count;
  for (uint32_t x = 0; x < 20000; ++x)
    for (int32_t d : map_x(p, x, 3, 1)) {
      REQUIRE(m.devices[size_t(d)].device_class == "ssd");
      ++count[d];
    }
  CHECK(count.size() == 10);
  for (const auto &[d, c] : count) CHECK(std::abs(c - 6000) < 600);
}

TEST_CASE("a reweighted device keeps only that share of its data") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(10, 10);
  m.devices[3].reweight = kWeightOne / 2;
  Placer p = make_placer(plugin, m);
  int on_three = 0;
  for (uint32_t x = 0; x < 100000; ++x)
    for (int32_t d : map_x(p, x)) on_three += d == 3;
  INFO(plugin << ": " << on_three << " of an unreweighted 3000");
  CHECK(on_three > 1300);
  CHECK(on_three < 1700);
}

TEST_CASE("a rule can choose racks first and then distinct hosts inside each") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  BuildSpec spec;
  spec.levels = {{"rack", 3}, {"host", 4}, {"device", 3}};
  auto built = build_map(spec);
  REQUIRE(built.ok());
  PlacementMap m = built.value();
  const TypeDef *rack = m.type_by_name("rack");
  const TypeDef *host = m.type_by_name("host");
  Rule r;
  r.id = 5;
  r.name = "two-by-two";
  r.steps = {Step{StepOp::kTake, -1, "", 0, 0}, Step{StepOp::kChoose, 0, "", 2, rack->id},
             Step{StepOp::kChooseleaf, 0, "", 2, host->id}, Step{StepOp::kEmit, 0, "", 0, 0}};
  m.rules.push_back(r);
  Topology topo(m);
  Placer p = make_placer(plugin, m);
  for (uint32_t x = 0; x < 5000; ++x) {
    std::vector<int32_t> out = map_x(p, x, 4, 5);
    REQUIRE(out.size() == 4);
    std::set<int32_t> hosts, racks;
    for (int32_t d : out) {
      hosts.insert(topo.ancestor_of_type(d, host->id));
      racks.insert(topo.ancestor_of_type(d, rack->id));
    }
    CHECK(hosts.size() == 4);
    CHECK(racks.size() == 2);
    CHECK(topo.ancestor_of_type(out[0], rack->id) == topo.ancestor_of_type(out[1], rack->id));
  }
}

TEST_CASE("a rule with one ssd replica and the rest on hdd places each where it belongs") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(6, 4);
  for (Device &d : m.devices) d.device_class = d.id % 4 == 0 ? "ssd" : "hdd";
  Rule r;
  r.id = 3;
  r.name = "hybrid";
  uint32_t host = m.type_by_name("host")->id;
  r.steps = {Step{StepOp::kTake, -1, "ssd", 0, 0}, Step{StepOp::kChooseleaf, 0, "", 1, host},
             Step{StepOp::kEmit, 0, "", 0, 0}, Step{StepOp::kTake, -1, "hdd", 0, 0},
             Step{StepOp::kChooseleaf, 0, "", -1, host}, Step{StepOp::kEmit, 0, "", 0, 0}};
  m.rules.push_back(r);
  Placer p = make_placer(plugin, m);
  for (uint32_t x = 0; x < 2000; ++x) {
    std::vector<int32_t> out = map_x(p, x, 3, 3);
    REQUIRE(out.size() == 3);
    CHECK(m.devices[size_t(out[0])].device_class == "ssd");
    CHECK(m.devices[size_t(out[1])].device_class == "hdd");
    CHECK(m.devices[size_t(out[2])].device_class == "hdd");
  }
}

TEST_CASE("a plugin returns fewer devices when the rule runs out of failure domains") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  Placer p = make_placer(plugin, hosts_map(3, 2));
  for (uint32_t x = 0; x < 1000; ++x) CHECK(map_x(p, x, 5).size() == 3);
}

TEST_CASE("a plugin refuses an unknown rule and too many replicas") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  Placer p = make_placer(plugin, hosts_map(3, 2));
  int32_t out[STRATA_PLACEMENT_MAX_RESULT + 1];
  CHECK(p.map(42, 1, 3, out, 3) == -ENOENT);
  CHECK(p.map(0, 1, STRATA_PLACEMENT_MAX_RESULT + 1, out, STRATA_PLACEMENT_MAX_RESULT + 1) ==
        -EINVAL);
  CHECK(p.map(0, 1, 3, out, 2) == 2);  // never more than the buffer holds
}

TEST_CASE("a large map keeps failure domains and reaches every device that is in, for every plugin") {
  // 40 hosts x 15 devices: more candidates than rendezvous ranks from its
  // stack buffer, so its rescanning path is the one exercised.
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(40, 15);
  for (int32_t id : {3, 200, 201, 599}) m.devices[size_t(id)].out = true;
  Topology topo(m);
  Placer p = make_placer(plugin, m);
  std::map<int32_t, int> count;
  for (uint32_t x = 0; x < 20000; ++x) {
    std::vector<int32_t> out = map_x(p, x);
    REQUIRE(out.size() == 3);
    std::set<int32_t> hosts;
    for (int32_t d : out) {
      CHECK_FALSE(m.devices[size_t(d)].out);
      hosts.insert(topo.parent(d));
      ++count[d];
    }
    CHECK(hosts.size() == 3);
  }
  CHECK(count.size() == 596);
}
