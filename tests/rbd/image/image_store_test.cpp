// The administrative calls: create, list, info, rename, resize, remove.
#include <catch2/catch.hpp>
#include <atomic>
#include <thread>

#include "image_test_support.h"
#include "strata/client.h"

using namespace imagetest;
using strata::rbd::CreateOptions;

TEST_CASE("images are created, listed, described, renamed and removed", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("store_basic");
  auto &s = *p.store;
  CHECK(s.list().empty());
  s.create("beta", {1000000, 65536});
  s.create("alpha", {4096, 4096});
  CHECK(s.list() == std::vector<std::string>{"alpha", "beta"});

  const auto info = s.info("beta");
  CHECK(info.name == "beta");
  CHECK(info.pool == "store_basic");
  CHECK(info.size == 1000000);
  CHECK(info.object_size == 65536);
  CHECK(info.id.size() == 16);
  CHECK(info.created_ns > 0);
  CHECK(info.snaps.empty());
  CHECK(info.lock_owner.empty());

  CHECK(error_of([&] { s.create("beta", {10, 65536}); }) == -EEXIST);
  CHECK(error_of([&] { s.info("gamma"); }) == -ENOENT);
  CHECK(error_of([&] { s.remove("gamma"); }) == -ENOENT);
  CHECK(error_of([&] { s.create("", {10, 65536}); }) == -EINVAL);
  CHECK(error_of([&] { s.create("a/b", {10, 65536}); }) == -EINVAL);
  CHECK(error_of([&] { s.create("a@b", {10, 65536}); }) == -EINVAL);
  CHECK(error_of([&] { s.create(std::string(256, 'x'), {10, 65536}); }) == -EINVAL);
  CHECK(error_of([&] { s.create(std::string(255, 'x'), {10, 65536}); }) == 0);
  CHECK(error_of([&] { s.create("odd", {10, 65535}); }) == -EINVAL);
  CHECK(error_of([&] { s.create("tiny", {10, 2048}); }) == -EINVAL);

  s.rename("beta", "gamma");
  CHECK(s.info("gamma").id == info.id);
  CHECK(error_of([&] { s.info("beta"); }) == -ENOENT);
  CHECK(error_of([&] { s.rename("gamma", "alpha"); }) == -EEXIST);
  CHECK(error_of([&] { s.rename("nothing", "other"); }) == -ENOENT);
  CHECK(error_of([&] { s.rename("gamma", "x@y"); }) == -EINVAL);

  // Data objects keep their names across a rename, and remove takes them.
  {
    auto img = p.open("gamma");
    REQUIRE(write_sync(*img, 65536 + 100, pattern(5000, 1)) == 0);
    REQUIRE(img->close() == 0);
  }
  const std::string oid = p.data_oid("gamma", 1);
  CHECK(p.object_exists(oid));
  s.remove("gamma");
  CHECK_FALSE(p.object_exists(oid));
  CHECK_FALSE(p.object_exists("rbd_header." + info.id));
  CHECK(s.list() == std::vector<std::string>{"alpha", std::string(255, 'x')});
}

TEST_CASE("two creates of one name: exactly one succeeds", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("store_race");
  std::atomic<int> ok{0}, exists{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      const int rc = error_of([&] { p.store->create("same", {4096, 4096}); });
      if (rc == 0) ++ok;
      if (rc == -EEXIST) ++exists;
    });
  for (auto &t : threads) t.join();
  CHECK(ok == 1);
  CHECK(exists == 3);
  CHECK(p.store->list() == std::vector<std::string>{"same"});
}

TEST_CASE("resize down removes the data past the end, resize up reads zeros", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("store_resize");
  const uint32_t os = 65536;
  p.store->create("r", {4 * os, os});
  const std::string data = pattern(4 * os, 7);
  {
    auto img = p.open("r");
    REQUIRE(write_sync(*img, 0, data) == 0);
    // An open image holds the lock: resizing it is refused.
    CHECK(error_of([&] { p.store->resize("r", os); }) == -EBUSY);
    REQUIRE(img->close() == 0);
  }
  CHECK(p.store->du("r") == 4 * os);
  const uint64_t small = os + 1000;
  p.store->resize("r", small);
  CHECK(p.store->info("r").size == small);
  uint64_t sz = 0;
  CHECK_FALSE(p.object_exists(p.data_oid("r", 2)));
  CHECK_FALSE(p.object_exists(p.data_oid("r", 3)));
  REQUIRE(p.object_exists(p.data_oid("r", 1), &sz));
  CHECK(sz == 1000);
  CHECK(p.store->du("r") == os + 1000);

  p.store->resize("r", 3 * os);
  auto img = p.open("r", read_only_opts());
  CHECK(img->size() == 3 * os);
  std::string got;
  REQUIRE(read_sync(*img, 0, 3 * os, &got) == 0);
  std::string want = data.substr(0, small) + std::string(3 * os - small, '\0');
  CHECK(first_difference(got, want) == -1);
}

TEST_CASE("remove refuses an image with snapshots or a live lock holder", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("store_remove");
  p.store->create("busy", {65536, 65536});
  {
    auto img = p.open("busy", described("remove test"));
    const auto info = p.store->info("busy");
    CHECK(info.lock_owner.find("remove test") != std::string::npos);
    CHECK(error_of([&] { p.store->remove("busy"); }) == -EBUSY);
  }
  p.store->snap_create("busy", "s1");
  CHECK(error_of([&] { p.store->remove("busy"); }) == -ENOTEMPTY);
  p.store->snap_remove("busy", "s1");
  p.store->remove("busy");
  CHECK(p.store->list().empty());
}

TEST_CASE("a remove that stopped after the header went can be finished", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("store_restart");
  p.store->create("half", {2 * 65536, 65536});
  const std::string id = p.store->info("half").id;
  // As if a remove crashed after the data and the header were gone.
  REQUIRE(strata_remove(p.io, ("rbd_header." + id).c_str()) == 0);
  CHECK(error_of([&] { p.store->info("half"); }) == -ENOENT);
  CHECK(p.store->list() == std::vector<std::string>{"half"});
  p.store->remove("half");
  CHECK(p.store->list().empty());
  CHECK(error_of([&] { p.store->remove("half"); }) == -ENOENT);
}
