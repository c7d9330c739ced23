// The cluster map: its wire form, incrementals, the generated placement
// map, and MapView's PG -> OSD lookups.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "cluster/placement_gen.h"
#include "mon_test_support.h"
#include "placement/pg.h"

using namespace strata;
using namespace strata::cluster;
using mon_test::crush;
using mon_test::sample_map;

TEST_CASE("a cluster map survives encode and decode unchanged", "[map]") {
  ClusterMap m = sample_map(6, 3);
  m.osds[2].up = false;
  m.osds[2].down_at = 4;
  m.osds[2].down_since_ms = 123456;
  m.osds[4].in = false;
  m.osds[5].weight = 0x8000;
  m.created_ms = 1;
  m.modified_ms = 2;
  auto pm = generate_placement(m.osds, m.placement);
  REQUIRE(pm.ok());
  m.placement = *pm;
  auto back = decode_map(encode_map(m));
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(*back == m);
}

TEST_CASE("an empty map (epoch 1 before any OSD) round-trips", "[map]") {
  ClusterMap m;
  m.epoch = 1;
  m.fsid = "x";
  auto pm = generate_placement({}, {});
  REQUIRE(pm.ok());
  CHECK(pm->rules.empty());
  m.placement = *pm;
  auto back = decode_map(encode_map(m));
  REQUIRE(back.ok());
  CHECK(*back == m);
}

TEST_CASE("decoding refuses garbage with an error, not a crash", "[map]") {
  CHECK(!decode_map("").ok());
  CHECK(!decode_map("1234567").ok());
  std::string junk(64, '\xff');
  CHECK(!decode_map(junk).ok());
  std::string bytes = encode_map(sample_map(3, 3));
  CHECK(!decode_map(bytes.substr(0, bytes.size() / 2 / 8 * 8)).ok());
}

TEST_CASE("applying each epoch's incremental gives the full map of that epoch", "[map]") {
  std::vector<ClusterMap> epochs;
  ClusterMap m = sample_map(4, 2);
  epochs.push_back(m);
  auto next = [&](auto change) {
    ClusterMap n = epochs.back();
    change(n);
    n.epoch = epochs.back().epoch + 1;
    n.modified_ms = n.epoch * 1000;
    auto pm = generate_placement(n.osds, epochs.back().placement);
    REQUIRE(pm.ok());
    n.placement = *pm;
    epochs.push_back(n);
  };
  next([](ClusterMap &n) { n.osds[1].up = false; });  // OSD down
  next([](ClusterMap &n) { n.osds[1].in = false; });  // out: placement changes
  next([](ClusterMap &n) {                            // a new OSD on a new host
    OsdInfo o;
    o.id = 7;
    o.host = "host9";
    o.up = true;
    n.osds[7] = o;
  });
  next([](ClusterMap &n) { n.pools.erase(1); });  // pool removed
  next([](ClusterMap &n) {                        // pool added
    PoolInfo p;
    p.id = 2;
    p.name = "two";
    p.size = 2;
    n.pools[2] = p;
  });
  next([](ClusterMap &n) { n.osds.erase(3); });          // OSD removed
  next([](ClusterMap &n) { n.pools[2].min_size = 1; });  // pool changed
  ClusterMap cur = epochs.front();
  for (size_t i = 1; i < epochs.size(); ++i) {
    std::string inc = encode_incremental(epochs[i - 1], epochs[i]);
    auto applied = apply_incremental(cur, inc);
    INFO("epoch " << epochs[i].epoch << ": " << applied.status().message());
    REQUIRE(applied.ok());
    CHECK(*applied == epochs[i]);
    cur = *applied;
  }
  SECTION("an incremental applies only to the epoch before it") {
    std::string inc = encode_incremental(epochs[2], epochs[3]);
    CHECK(!apply_incremental(epochs[1], inc).ok());
    CHECK(!apply_incremental(epochs[3], inc).ok());
  }
}

TEST_CASE("the generated placement map has hosts under one root and both rules", "[placement]") {
  ClusterMap m = sample_map(6, 3);
  const auto &pm = m.placement;
  REQUIRE(pm.bucket(-1));
  CHECK(pm.bucket(-1)->name == "default");
  CHECK(pm.bucket(-1)->items.size() == 3);
  for (int32_t h : pm.bucket(-1)->items) {
    REQUIRE(pm.bucket(h));
    CHECK(pm.type_name(pm.bucket(h)->type) == "host");
    CHECK(pm.bucket(h)->items.size() == 2);
  }
  REQUIRE(pm.rule(kRuleHost));
  REQUIRE(pm.rule(kRuleOsd));
  for (int i = 0; i < 6; ++i) {
    REQUIRE(pm.device(i));
    CHECK(pm.device(i)->name == "osd." + std::to_string(i));
  }

  SECTION("an out OSD is an out device; weights follow the OSD table") {
    m.osds[2].in = false;
    m.osds[3].weight = 0x20000;
    auto p2 = generate_placement(m.osds, pm);
    REQUIRE(p2.ok());
    CHECK(p2->device(2)->out);
    CHECK(p2->device(3)->weight == 0x20000);
  }
  SECTION("host bucket ids stay put when a host is added before them in name order") {
    OsdInfo o;
    o.id = 9;
    o.host = "a-first-host";
    m.osds[9] = o;
    auto p2 = generate_placement(m.osds, pm);
    REQUIRE(p2.ok());
    for (const auto &b : pm.buckets) {
      int32_t id = 0;
      REQUIRE(p2->item_by_name(b.name, &id));
      CHECK(id == b.id);
    }
  }
  SECTION("no OSD weight at all: no rules, still a valid map") {
    for (auto &[id, o] : m.osds) o.weight = 0;
    auto p2 = generate_placement(m.osds, pm);
    REQUIRE(p2.ok());
    CHECK(p2->rules.empty());
  }
}

TEST_CASE("a new pool spreads over hosts only when there are enough of them", "[placement]") {
  CHECK(default_rule(sample_map(6, 3), 3) == kRuleHost);
  CHECK(default_rule(sample_map(6, 2), 3) == kRuleOsd);
  CHECK(default_rule(sample_map(3, 1), 3) == kRuleOsd);
  CHECK(default_rule(sample_map(3, 1), 1) == kRuleHost);
}

TEST_CASE("MapView: raw sets respect the rule and acting drops down OSDs in order", "[view]") {
  ClusterMap m = sample_map(6, 3);
  auto v = MapView::create(m, crush());
  INFO(v.status().message());
  REQUIRE(v.ok());
  const MapView &view = **v;
  for (uint32_t seed = 0; seed < 16; ++seed) {
    PgId pg{1, seed};
    auto raw = view.raw_set(pg);
    REQUIRE(raw.size() == 3);
    std::set<std::string> hosts;
    for (int32_t id : raw) hosts.insert(m.osds[id].host);
    CHECK(hosts.size() == 3);  // rule 0: distinct hosts
    CHECK(view.acting(pg) == raw);
    CHECK(view.primary(pg) == raw[0]);
  }

  SECTION("down OSDs leave the acting set; the order of the rest is kept") {
    PgId pg{1, 5};
    auto raw = view.raw_set(pg);
    ClusterMap m2 = m;
    m2.osds[raw[0]].up = false;
    auto v2 = MapView::create(m2, crush());
    REQUIRE(v2.ok());
    CHECK((*v2)->raw_set(pg) == raw);  // down does not move data
    CHECK((*v2)->acting(pg) == std::vector<int32_t>{raw[1], raw[2]});
    CHECK((*v2)->primary(pg) == raw[1]);
    for (int32_t id : raw) m2.osds[id].up = false;
    auto v3 = MapView::create(m2, crush());
    REQUIRE(v3.ok());
    CHECK((*v3)->acting(pg).empty());
    CHECK((*v3)->primary(pg) == -1);
  }
  SECTION("out OSDs leave the raw set (their PGs move)") {
    ClusterMap m2 = m;
    m2.osds[0].in = false;
    auto pm = generate_placement(m2.osds, m.placement);
    REQUIRE(pm.ok());
    m2.placement = *pm;
    auto v2 = MapView::create(m2, crush());
    REQUIRE(v2.ok());
    for (uint32_t seed = 0; seed < 16; ++seed) {
      auto raw = (*v2)->raw_set(PgId{1, seed});
      CHECK(raw.size() == 3);
      CHECK(std::find(raw.begin(), raw.end(), 0) == raw.end());
    }
  }
  SECTION("pg_of hashes names into the pool's PGs") {
    PgId pg = view.pg_of(1, "object-name");
    CHECK(pg.pool == 1);
    CHECK(pg.seed == placement::object_to_pg("object-name", 16));
  }
  SECTION("unknown pools and seeds map to nothing") {
    CHECK(view.raw_set(PgId{7, 0}).empty());
    CHECK(view.raw_set(PgId{1, 16}).empty());
  }
}

TEST_CASE("MapView on a map without OSDs maps every PG to nothing", "[view]") {
  ClusterMap m;
  m.epoch = 1;
  auto pm = generate_placement({}, {});
  REQUIRE(pm.ok());
  m.placement = *pm;
  PoolInfo p;
  p.id = 1;
  p.name = "data";
  m.pools[1] = p;
  auto v = MapView::create(m, crush());
  REQUIRE(v.ok());
  CHECK((*v)->acting(PgId{1, 0}).empty());
}

TEST_CASE("a one-host cluster with rule 1 puts replicas on distinct OSDs", "[view]") {
  ClusterMap m = sample_map(3, 1);
  REQUIRE(m.pools[1].rule == kRuleOsd);
  auto v = MapView::create(m, crush());
  REQUIRE(v.ok());
  for (uint32_t seed = 0; seed < 16; ++seed) {
    auto raw = (*v)->raw_set(PgId{1, seed});
    CHECK(std::set<int32_t>(raw.begin(), raw.end()).size() == 3);
  }
}
