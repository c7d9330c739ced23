// The RocksDB map store: what a commit writes is there after reopening,
// atomically, and old epochs are trimmed.
#include "mon/map_store.h"

#include <catch2/catch.hpp>

#include "mon/monitor.h"
#include "mon_test_support.h"

using namespace strata;
using namespace strata::mon;
using mon_test::TempDir;

namespace {

std::unique_ptr<MapStore> open_store(const std::string &dir, bool create, uint64_t history = 500) {
  auto s = open_rocks_map_store(dir, {.create = create, .history = history});
  INFO(s.status().message());
  REQUIRE(s.ok());
  return std::move(s.value());
}

MapStoreUpdate epoch(uint64_t e) {
  MapStoreUpdate u;
  u.epoch = e;
  u.full = "full-" + std::to_string(e);
  u.incremental = e > 1 ? "inc-" + std::to_string(e) : "";
  return u;
}

}  // namespace

TEST_CASE("map store: epochs, keys and meta survive a reopen", "[store]") {
  TempDir d("store");
  std::string dir = d / "db";
  {
    auto s = open_store(dir, true);
    CHECK(s->last_epoch() == 0);
    MapStoreUpdate u = epoch(1);
    u.auth["client.admin"] = std::string("\0secret", 7);
    u.meta["fsid"] = "abc";
    REQUIRE(s->commit(u).ok());
    REQUIRE(s->commit(epoch(2)).ok());
    MapStoreUpdate a;  // auth-only change, no epoch
    a.auth["osd.1"] = "k1";
    REQUIRE(s->commit(a).ok());
  }
  auto s = open_store(dir, false);
  CHECK(s->last_epoch() == 2);
  CHECK(s->first_epoch() == 1);
  CHECK(s->full_map(1).value() == "full-1");
  CHECK(s->full_map(2).value() == "full-2");
  CHECK(s->incremental(2).value() == "inc-2");
  CHECK(s->full_map(3).status().code() == -ENOENT);
  auto keys = s->auth_keys();
  CHECK(keys.size() == 2);
  CHECK(keys["client.admin"] == std::string("\0secret", 7));
  CHECK(s->meta("fsid").value_or("") == "abc");
  CHECK(!s->meta("nothing"));

  SECTION("removals are durable too") {
    MapStoreUpdate u = epoch(3);
    u.auth["osd.1"] = std::nullopt;
    u.meta["fsid"] = std::nullopt;
    REQUIRE(s->commit(u).ok());
    s.reset();
    auto s2 = open_store(dir, false);
    CHECK(s2->auth_keys().size() == 1);
    CHECK(!s2->meta("fsid"));
    CHECK(s2->last_epoch() == 3);
  }
}

TEST_CASE("map store: a commit must be the next epoch", "[store]") {
  TempDir d("store");
  auto s = open_store(d / "db", true);
  REQUIRE(s->commit(epoch(1)).ok());
  CHECK(!s->commit(epoch(3)).ok());
  CHECK(!s->commit(epoch(1)).ok());
  CHECK(s->last_epoch() == 1);
}

TEST_CASE("map store: epochs older than the history are trimmed", "[store]") {
  TempDir d("store");
  auto s = open_store(d / "db", true, 5);
  for (uint64_t e = 1; e <= 12; ++e) REQUIRE(s->commit(epoch(e)).ok());
  CHECK(s->first_epoch() == 8);
  CHECK(!s->full_map(7).ok());
  CHECK(s->full_map(8).ok());
  CHECK(s->incremental(12).ok());
}

TEST_CASE("map store: mkfs refuses an existing store, open refuses a missing one", "[store]") {
  TempDir d("store");
  CHECK(open_rocks_map_store(d / "db", {.create = false}).status().code() == -ENOENT);
  open_store(d / "db", true);
  CHECK(open_rocks_map_store(d / "db", {.create = true}).status().code() == -EEXIST);
}

TEST_CASE("monitor mkfs writes epoch 1 with the fsid and the keys", "[store]") {
  TempDir d("store");
  auto s = open_store(d / "db", true);
  REQUIRE(Monitor::mkfs(*s, "my-fsid", {{"mon", "m"}, {"client.admin", "a"}}, "crush", 42).ok());
  auto m = cluster::decode_map(s->full_map(1).value());
  REQUIRE(m.ok());
  CHECK(m->epoch == 1);
  CHECK(m->fsid == "my-fsid");
  CHECK(m->osds.empty());
  CHECK(m->pools.empty());
  CHECK(m->placement_plugin == "crush");
  CHECK(m->created_ms == 42);
  CHECK(s->auth_keys().size() == 2);
  CHECK(!Monitor::mkfs(*s, "again", {}, "crush", 43).ok());
}
