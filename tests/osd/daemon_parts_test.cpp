// Small parts of the daemon: heartbeat failure detection and the identity
// file that ties a store to one OSD of one cluster.
#include <catch2/catch.hpp>

#include <fstream>

#include "osd/heartbeat.h"
#include "osd/osd_identity.h"
#include "osd_test_support.h"

using namespace strata;
using namespace strata::osd;
using namespace std::chrono_literals;

TEST_CASE("a peer silent for the grace period is reported once per period, and retracted when it answers") {
  HeartbeatTracker hb;
  auto t0 = HeartbeatTracker::Clock::now();
  hb.set_peers({{1, 10}, {2, 10}}, t0);
  CHECK(hb.due(t0 + 500ms, 1000ms).empty());
  hb.on_reply(1, t0 + 900ms);
  auto r = hb.due(t0 + 1500ms, 1000ms);
  REQUIRE(r.size() == 1);
  CHECK(r[0].osd == 2);
  CHECK_FALSE(r[0].still_alive);
  CHECK(r[0].silent_ms >= 1500);
  CHECK(hb.due(t0 + 1800ms, 1000ms).empty());  // reported already this period
  CHECK(hb.due(t0 + 2600ms, 1000ms).size() == 2);  // osd.1 silent now too; osd.2 again
  hb.on_reply(2, t0 + 2700ms);
  auto back = hb.due(t0 + 2800ms, 1000ms);
  REQUIRE(back.size() == 1);
  CHECK(back[0].osd == 2);
  CHECK(back[0].still_alive);
}

TEST_CASE("a rebooted peer gets a fresh grace period") {
  HeartbeatTracker hb;
  auto t0 = HeartbeatTracker::Clock::now();
  hb.set_peers({{1, 10}}, t0);
  hb.set_peers({{1, 12}}, t0 + 5s);  // new up_from
  CHECK(hb.due(t0 + 5500ms, 1000ms).empty());
  hb.set_peers({}, t0 + 6s);  // marked down: no longer watched
  CHECK(hb.due(t0 + 60s, 1000ms).empty());
}

TEST_CASE("an OSD refuses a store made for another OSD id or another cluster") {
  osdtest::TempDir dir("osd-ident");
  CHECK(OsdIdentity::load(dir.path()).status().code() == -ENOENT);
  OsdIdentity id;
  id.osd_id = 3;
  id.cluster_fsid = "abc";
  REQUIRE(id.save(dir.path()).ok());
  auto back = OsdIdentity::load(dir.path());
  REQUIRE(back.ok());
  CHECK(back->osd_id == 3);
  CHECK(back->cluster_fsid == "abc");
  CHECK(back->check(3, "abc", dir.path()).ok());
  CHECK(back->check(3, "", dir.path()).ok());
  CHECK(back->check(4, "abc", dir.path()).code() == -EINVAL);
  Status other = back->check(3, "xyz", dir.path());
  CHECK(other.code() == -EINVAL);
  CHECK(other.message().find("cluster abc") != std::string::npos);
  std::ofstream(dir.sub(OsdIdentity::kFileName)) << "osd_id = x\n";
  CHECK(OsdIdentity::load(dir.path()).status().code() == -EUCLEAN);
}
