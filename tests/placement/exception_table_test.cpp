// The exception table: honoured by every mapping, but never at the cost of
// the rule's failure domains, class or in/out state.
#include <algorithm>
#include <set>

#include "placement/exception_table.h"
#include "placement/pg.h"
#include "placement/pool_mapping.h"
#include "placement/text_format.h"
#include "placement/topology.h"
#include "placement_test_support.h"

using namespace placement_test;

namespace {

// Mapping of PG `seed` of pool 1 with the map's exceptions.
std::vector<int32_t> effective(const std::string &plugin, const PlacementMap &m, uint32_t seed) {
  Placer p = make_placer(plugin, m);
  Topology topo(m);
  auto pm = map_pool(p, topo, {1, seed + 1, 0, 3});
  REQUIRE(pm.ok());
  return pm.value().effective[seed];
}

// A device in a host none of `result` uses, and one in the same host as
// result[1].
struct Candidates {
  int32_t free_host_device;
  int32_t busy_host_device;
};

Candidates candidates(const PlacementMap &m, const std::vector<int32_t> &result) {
  Topology topo(m);
  std::set<int32_t> used;
  for (int32_t d : result) used.insert(topo.parent(d));
  Candidates c{-1, -1};
  for (const Device &d : m.devices) {
    if (std::find(result.begin(), result.end(), d.id) != result.end()) continue;
    if (!used.count(topo.parent(d.id)) && c.free_host_device < 0) c.free_host_device = d.id;
    if (topo.parent(d.id) == topo.parent(result[1]) && c.busy_host_device < 0)
      c.busy_host_device = d.id;
  }
  return c;
}

}  // namespace

TEST_CASE("an exception replaces the device in place for every plugin") {
  std::string plugin = GENERATE(from_range(all_plugins()));
  PlacementMap m = hosts_map(6, 3);
  std::vector<int32_t> raw = effective(plugin, m, 9);
  Candidates c = candidates(m, raw);
  REQUIRE(c.free_host_device >= 0);
  m.exceptions[PgId{1, 9}] = {{raw[1], c.free_host_device}};
  std::vector<int32_t> out = effective(plugin, m, 9);
  CHECK(out == std::vector<int32_t>{raw[0], c.free_host_device, raw[2]});
  // Other PGs are untouched.
  PlacementMap plain = hosts_map(6, 3);
  CHECK(effective(plugin, m, 8) == effective(plugin, plain, 8));
}

TEST_CASE("an exception that would put two replicas in one host is ignored") {
  PlacementMap m = hosts_map(6, 3);
  std::vector<int32_t> raw = effective("crush", m, 4);
  Candidates c = candidates(m, raw);
  REQUIRE(c.busy_host_device >= 0);
  // Replacing raw[0] by a device in raw[1]'s host breaks the host rule.
  m.exceptions[PgId{1, 4}] = {{raw[0], c.busy_host_device}};
  CHECK(effective("crush", m, 4) == raw);
}

TEST_CASE("an exception to an out device or a device outside the rule is ignored") {
  PlacementMap m = hosts_map(6, 3);
  std::vector<int32_t> raw = effective("crush", m, 2);
  Candidates c = candidates(m, raw);
  m.devices[size_t(c.free_host_device)].out = true;
  m.exceptions[PgId{1, 2}] = {{raw[2], c.free_host_device}};
  CHECK(effective("crush", m, 2) == raw);

  // A device in no bucket under the rule's root.
  PlacementMap lone = hosts_map(6, 3);
  lone.devices.push_back(Device{100, "osd.100", kWeightOne, "", kWeightOne, false});
  lone.exceptions[PgId{1, 2}] = {{raw[2], 100}};
  CHECK(effective("crush", lone, 2) == raw);
}

TEST_CASE("an exception whose device left the result is skipped and the rest apply") {
  PlacementMap m = hosts_map(6, 3);
  std::vector<int32_t> raw = effective("crush", m, 5);
  Candidates c = candidates(m, raw);
  int32_t absent = -1;
  for (const Device &d : m.devices)
    if (std::find(raw.begin(), raw.end(), d.id) == raw.end() && d.id != c.free_host_device) {
      absent = d.id;
      break;
    }
  m.exceptions[PgId{1, 5}] = {{absent, raw[0]}, {raw[2], c.free_host_device}};
  CHECK(effective("crush", m, 5) == std::vector<int32_t>{raw[0], raw[1], c.free_host_device});
}

TEST_CASE("exceptions survive the text and binary forms") {
  PlacementMap m = hosts_map(4, 2);
  m.exceptions[PgId{3, 0xabc}] = {{1, 6}};
  auto back = parse_text(format_text(m));
  REQUIRE(back.ok());
  CHECK(back.value().exceptions == m.exceptions);
}
