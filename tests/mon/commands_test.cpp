// Monitor commands as pure functions: argument checks, the changes they
// propose, and their human and JSON replies.
#include <catch2/catch.hpp>

#include "cluster/placement_gen.h"
#include "common/json.h"
#include "mon/mon_commands.h"
#include "mon_test_support.h"

using namespace strata;
using namespace strata::mon;
using mon_test::crush;
using mon_test::sample_map;

namespace {

struct Harness {
  std::shared_ptr<const cluster::MapView> view;
  PgStatsTable stats;
  std::map<std::string, std::string> auth{{"mon", "m"}, {"client.admin", "a"}};
  std::set<int32_t> admin_out;

  explicit Harness(cluster::ClusterMap m) { set(std::move(m)); }
  void set(cluster::ClusterMap m) {
    auto v = cluster::MapView::create(std::move(m), crush());
    REQUIRE(v.ok());
    view = v.value();
  }
  CommandReply run(const std::string &prefix, std::map<std::string, std::string> args = {},
                   CommandEffect *effect = nullptr, const std::string &entity = "client.admin") {
    CommandState st;
    st.view = view;
    st.stats = &stats;
    st.auth = &auth;
    st.admin_out = admin_out;
    CommandEffect local;
    return run_command({prefix, std::move(args), entity}, st, effect ? effect : &local);
  }
};

}  // namespace

TEST_CASE("pool create checks its arguments and proposes the pool", "[commands]") {
  Harness h(sample_map(3, 1));
  CommandEffect e;
  auto r = h.run("pool create", {{"name", "rbd"}, {"size", "2"}, {"pg_num", "8"}}, &e);
  INFO(r.message);
  REQUIRE(r.rc == 0);
  REQUIRE(e.next);
  const cluster::PoolInfo *p = e.next->pool_by_name("rbd");
  REQUIRE(p);
  CHECK(p->id == 2);
  CHECK(p->size == 2);
  CHECK(p->min_size == 2);
  CHECK(p->pg_num == 8);
  CHECK(p->rule == cluster::kRuleOsd);  // one host
  CHECK(r.json["name"].as_string() == "rbd");

  CHECK(h.run("pool create", {{"name", "data"}}).rc == -EEXIST);
  CHECK(h.run("pool create", {}).rc == -EINVAL);
  CHECK(h.run("pool create", {{"name", "x"}, {"size", "0"}}).rc == -EINVAL);
  CHECK(h.run("pool create", {{"name", "x"}, {"size", "abc"}}).rc == -EINVAL);
  CHECK(h.run("pool create", {{"name", "x"}, {"size", "2"}, {"min_size", "3"}}).rc == -EINVAL);
  CHECK(h.run("pool create", {{"name", "x"}, {"pg_num", "-1"}}).rc == -EINVAL);
  CHECK(h.run("pool create", {{"name", "bad name"}}).rc == -EINVAL);
}

TEST_CASE("pool set / get / rm / ls", "[commands]") {
  Harness h(sample_map(6, 3));
  CommandEffect e;
  auto r = h.run("pool set", {{"name", "data"}, {"key", "size"}, {"value", "2"}}, &e);
  REQUIRE(r.rc == 0);
  REQUIRE(e.next);
  CHECK(e.next->pools[1].size == 2);
  CHECK(e.next->pools[1].min_size == 2);
  CHECK(h.run("pool set", {{"name", "data"}, {"key", "min_size"}, {"value", "4"}}).rc == -EINVAL);
  CHECK(h.run("pool set", {{"name", "data"}, {"key", "pg_num"}, {"value", "64"}}).rc == -ENOTSUP);
  CHECK(h.run("pool set", {{"name", "data"}, {"key", "colour"}, {"value", "1"}}).rc == -EINVAL);
  CHECK(h.run("pool set", {{"name", "nope"}, {"key", "size"}, {"value", "1"}}).rc == -ENOENT);

  auto g = h.run("pool get", {{"name", "data"}});
  REQUIRE(g.rc == 0);
  CHECK(g.json["size"].as_int() == 3);
  CHECK(h.run("pool get", {{"name", "1"}}).rc == 0);  // by id too

  auto ls = h.run("pool ls");
  REQUIRE(ls.json.as_array().size() == 1);
  CHECK(ls.json.as_array()[0]["name"].as_string() == "data");

  CommandEffect rm;
  REQUIRE(h.run("pool rm", {{"name", "data"}}, &rm).rc == 0);
  REQUIRE(rm.next);
  CHECK(rm.next->pools.empty());
}

TEST_CASE("a deleted pool's id is never given to a new pool", "[commands]") {
  // A client's ioctx, or an OSD's PG, still naming the old id must never
  // reach the new pool.
  Harness h(sample_map(3, 3));
  uint32_t old_id = h.view->map().pool_by_name("data")->id;
  CommandEffect rm;
  REQUIRE(h.run("pool rm", {{"name", "data"}}, &rm).rc == 0);
  h.set(*rm.next);
  CommandEffect made;
  REQUIRE(h.run("pool create", {{"name", "data"}}, &made).rc == 0);
  REQUIRE(made.next);
  const cluster::PoolInfo *p = made.next->pool_by_name("data");
  REQUIRE(p);
  CHECK(p->id > old_id);
  CHECK(made.next->pool_max == p->id);
  // The record survives the wire, full and incremental.
  auto full = cluster::decode_map(cluster::encode_map(*made.next));
  REQUIRE(full.ok());
  CHECK(full->pool_max == p->id);
  cluster::ClusterMap after = *made.next;
  after.epoch = rm.next->epoch + 1;
  auto inc = cluster::apply_incremental(*rm.next, cluster::encode_incremental(*rm.next, after));
  REQUIRE(inc.ok());
  CHECK(inc->pool_max == p->id);
}

TEST_CASE("osd out / in / down / reweight", "[commands]") {
  Harness h(sample_map(3, 3));
  CommandEffect e;
  REQUIRE(h.run("osd out", {{"id", "osd.1"}}, &e).rc == 0);
  REQUIRE(e.next);
  CHECK(!e.next->osds[1].in);
  CHECK(e.meta[kMetaAdminOut].value_or("") == "1");

  CommandEffect d;
  REQUIRE(h.run("osd down", {{"id", "2"}}, &d).rc == 0);
  CHECK(!d.next->osds[2].up);

  CommandEffect w;
  REQUIRE(h.run("osd reweight", {{"id", "0"}, {"weight", "0.5"}}, &w).rc == 0);
  CHECK(w.next->osds[0].weight == 0x8000);
  CHECK(h.run("osd reweight", {{"id", "0"}, {"weight", "-1"}}).rc == -EINVAL);
  CHECK(h.run("osd out", {{"id", "9"}}).rc == -ENOENT);
  CHECK(h.run("osd out", {{"id", "x"}}).rc == -EINVAL);

  SECTION("osd in clears the operator's out mark") {
    cluster::ClusterMap m = h.view->map();
    m.osds[1].in = false;
    h.set(m);
    h.admin_out = {1};
    CommandEffect in;
    REQUIRE(h.run("osd in", {{"id", "1"}}, &in).rc == 0);
    CHECK(in.next->osds[1].in);
    CHECK(in.meta[kMetaAdminOut].value_or("x").empty());
  }
}

TEST_CASE("status, osd tree, osd ls and pg ls describe the map", "[commands]") {
  Harness h(sample_map(3, 3));
  auto s = h.run("status");
  REQUIRE(s.rc == 0);
  CHECK(s.json["osds"]["up"].as_int() == 3);
  CHECK(s.json["pgs"]["total"].as_int() == 16);
  CHECK(s.json["pgs"]["by_state"]["unknown"].as_int() == 16);  // no OSD reported yet
  CHECK(s.json["health"].as_string() == "HEALTH_WARN");
  CHECK(s.message.find("3 up") != std::string::npos);

  // The primaries report their PGs clean: status turns OK.
  for (const auto &[id, o] : h.view->map().osds) {
    OsdStatEntry e;
    e.id = id;
    e.used_bytes = 100;
    e.total_bytes = 1000;
    for (uint32_t seed = 0; seed < 16; ++seed) {
      cluster::PgId pg{1, seed};
      auto acting = h.view->acting(pg);
      if (acting[0] != id) continue;
      e.pgs.push_back({pg, "active+clean", 2, 20, 1, 5, acting});
    }
    h.stats.update(e);
  }
  s = h.run("status");
  CHECK(s.json["pgs"]["by_state"]["active+clean"].as_int() == 16);
  CHECK(s.json["health"].as_string() == "HEALTH_OK");
  CHECK(s.json["objects"].as_int() == 32);
  CHECK(s.json["used_bytes"].as_int() == 300);

  auto tree = h.run("osd tree");
  REQUIRE(tree.rc == 0);
  CHECK(tree.json["nodes"].as_array().size() == 1 + 3 + 3);
  CHECK(tree.message.find("osd.2") != std::string::npos);
  CHECK(h.run("osd ls").json.as_array().size() == 3);

  auto pgs = h.run("pg ls", {{"pool", "data"}});
  REQUIRE(pgs.rc == 0);
  REQUIRE(pgs.json.as_array().size() == 16);
  CHECK(pgs.json.as_array()[0]["pgid"].as_string() == "1.0");
  CHECK(pgs.json.as_array()[0]["acting"].as_array().size() == 3);

  SECTION("a PG whose primary reported another acting set is peering") {
    cluster::ClusterMap m = h.view->map();
    int32_t second = h.view->acting({1, 0})[1];
    m.osds[second].up = false;
    h.set(m);
    auto p = h.run("pg ls", {{"pool", "1"}});
    CHECK(p.json.as_array()[0]["state"].as_string() == "peering");
  }
}

TEST_CASE("auth add / rm / ls", "[commands]") {
  Harness h(sample_map(1, 1, 1));
  CommandEffect e;
  auto r = h.run("auth add", {{"entity", "client.bob"}}, &e);
  REQUIRE(r.rc == 0);
  REQUIRE(e.auth.count("client.bob"));
  CHECK(e.auth["client.bob"]->size() == 32);
  CHECK(r.message.find("[client.bob]") != std::string::npos);
  CHECK(r.json["key"].as_string().size() == 44);
  CHECK(h.run("auth add", {{"entity", "client.admin"}}).rc == -EEXIST);
  CHECK(h.run("auth add", {{"entity", "nobody"}}).rc == -EINVAL);
  CHECK(h.run("auth rm", {{"entity", "client.zed"}}).rc == -ENOENT);
  CHECK(h.run("auth rm", {{"entity", "client.admin"}}).rc == -EPERM);
  CHECK(h.run("auth ls").json.as_array().size() == 2);
}

TEST_CASE("mutating commands need client.admin; unknown commands are refused", "[commands]") {
  Harness h(sample_map(1, 1, 1));
  CHECK(h.run("pool create", {{"name", "x"}}, nullptr, "client.reader").rc == -EACCES);
  CHECK(h.run("osd out", {{"id", "0"}}, nullptr, "osd.0").rc == -EACCES);
  CHECK(h.run("pool ls", {}, nullptr, "client.reader").rc == 0);
  auto r = h.run("pool explode");
  CHECK(r.rc == -EINVAL);
  CHECK(r.message.find("unknown command") != std::string::npos);
  CHECK(!r.json["error"].as_string().empty());
}

TEST_CASE("osd ids parse as N or osd.N", "[commands]") {
  CHECK(parse_osd_id("3") == 3);
  CHECK(parse_osd_id("osd.12") == 12);
  CHECK(parse_osd_id("osd.") == -1);
  CHECK(parse_osd_id("-1") == -1);
  CHECK(parse_osd_id("osd.1x") == -1);
  CHECK(parse_id_set("1,3,x,7") == std::set<int32_t>{1, 3, 7});
  CHECK(format_id_set({7, 1}) == "1,7");
}

TEST_CASE("JSON values dump and parse back", "[json]") {
  json::Value v;
  v.set("s", "a \"quoted\"\n\x01 string");
  v.set("i", -42);
  v.set("d", 1.5);
  v.set("b", true);
  v.set("n", nullptr);
  json::Value arr = json::Array{};
  arr.push(1);
  arr.push("two");
  arr.push(json::Object{});
  v.set("a", arr);
  auto back = json::parse(v.dump());
  INFO(v.dump());
  REQUIRE(back.ok());
  CHECK(back->dump() == v.dump());
  CHECK((*back)["s"].as_string() == "a \"quoted\"\n\x01 string");
  CHECK((*back)["i"].as_int() == -42);
  CHECK((*back)["d"].as_double() == 1.5);
  CHECK((*back)["a"].as_array()[1].as_string() == "two");
  CHECK((*back)["missing"].is_null());
  CHECK(json::parse("{\"u\":\"\\u00e9\\ud83d\\ude00\"}")->operator[]("u").as_string() ==
        "\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(!json::parse("{").ok());
  CHECK(!json::parse("[1,]").ok());
  CHECK(!json::parse("{} x").ok());
  CHECK(!json::parse(std::string(100, '[')).ok());
}

TEST_CASE("damaged objects a primary reports make the PG inconsistent and health HEALTH_ERR naming them",
          "[commands]") {
  Harness h(sample_map(3, 3));
  for (const auto &[id, o] : h.view->map().osds) {
    OsdStatEntry e;
    e.id = id;
    for (uint32_t seed = 0; seed < 16; ++seed) {
      cluster::PgId pg{1, seed};
      auto acting = h.view->acting(pg);
      if (acting[0] != id) continue;
      PgStatEntry p{pg, "active+clean", 2, 20, 1, 5, acting};
      if (seed == 3) {
        p.state = "active+clean+inconsistent";
        p.damaged = {{"victim", "deep-scrub: digest mismatch on osd.2"}};
        p.damaged_total = 1;
        p.read_repairs = 4;
      }
      e.pgs.push_back(p);
    }
    h.stats.update(e);
  }
  auto s = h.run("status");
  REQUIRE(s.rc == 0);
  CHECK(s.json["health"].as_string() == "HEALTH_ERR");
  REQUIRE(s.json["damaged_objects"].as_array().size() == 1);
  CHECK(s.json["damaged_objects"].as_array()[0]["oid"].as_string() == "victim");
  CHECK(s.json["damaged_objects"].as_array()[0]["pgid"].as_string() == "1.3");
  CHECK(s.json["read_repairs"].as_int() == 4);
  CHECK(s.message.find("HEALTH_ERR") != std::string::npos);
  CHECK(s.message.find("pg 1.3 object 'victim': deep-scrub: digest mismatch on osd.2") != std::string::npos);
  // The inconsistent PG is clean otherwise: no "not active+clean" warning.
  CHECK(s.message.find("not active+clean") == std::string::npos);

  auto pgs = h.run("pg ls", {{"pool", "data"}});
  REQUIRE(pgs.rc == 0);
  const json::Value &row = pgs.json.as_array()[3];
  CHECK(row["state"].as_string() == "active+clean+inconsistent");
  CHECK(row["damaged_objects"].as_array()[0]["oid"].as_string() == "victim");
  CHECK(row["read_repairs"].as_int() == 4);
  CHECK(pgs.message.find("active+clean+inconsistent") != std::string::npos);
}
