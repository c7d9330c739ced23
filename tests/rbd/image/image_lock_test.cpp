// The exclusive lock of read-write opens.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "image_test_support.h"

using namespace imagetest;
using strata::rbd::Image;
using strata::rbd::OpenOptions;

namespace {
// The message of the error open throws, with its code in *code.
std::string open_error(TestPool &p, const std::string &name, const OpenOptions &o, int *code) {
  try {
    p.open(name, o);
  } catch (const strata::sdk::Error &e) {
    *code = e.code();
    return e.what();
  }
  *code = 0;
  return "";
}
}  // namespace

TEST_CASE("a second read-write open is refused while the holder lives, readers are not",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("lock_busy");
  p.store->create("l", {65536, 65536});
  OpenOptions o;
  o.lock_description = "first holder";
  auto first = p.open("l", o);
  int code = 0;
  const std::string msg = open_error(p, "l", {}, &code);
  CHECK(code == -EBUSY);
  CHECK(msg.find("first holder") != std::string::npos);
  CHECK(msg.find("lease ends") != std::string::npos);
  CHECK(msg.find("lock_busy/l") != std::string::npos);
  // The owner names the client connection (its instance id).
  CHECK(p.store->info("l").lock_owner.find("client.") == 0);

  OpenOptions ro;
  ro.read_only = true;
  auto reader = p.open("l", ro);
  CHECK(reader->read_only());
  std::string got;
  CHECK(write_sync(*reader, 0, "x") == -EROFS);
  REQUIRE(write_sync(*first, 0, "hello") == 0);
  REQUIRE(read_sync(*reader, 0, 5, &got) == 0);
  CHECK(got == "hello");

  // Closing gives the lock back.
  REQUIRE(first->close() == 0);
  CHECK(p.store->info("l").lock_owner.empty());
  auto second = p.open("l");
  CHECK(write_sync(*second, 0, "again") == 0);
}

TEST_CASE("an expired lease is taken over and the old holder's writes then fail with EBUSY",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("lock_expire");
  p.store->create("l", {65536, 65536});
  OpenOptions slow;
  slow.lock_lease_ms = 500;
  slow.lock_renew_ms = 1500;  // renews too late: the lease lapses in between
  auto old = p.open("l", slow);
  REQUIRE(write_sync(*old, 0, "old") == 0);
  int code = 0;
  open_error(p, "l", {}, &code);
  CHECK(code == -EBUSY);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  // Past its lease and not renewed: the old holder stops writing by itself.
  CHECK(write_sync(*old, 3, "x") == -EBUSY);
  auto taker = p.open("l");
  REQUIRE(write_sync(*taker, 0, "new") == 0);
  // The old holder's renewal finds the lock taken.
  std::this_thread::sleep_for(std::chrono::milliseconds(1400));
  CHECK(write_sync(*old, 3, "x") == -EBUSY);
  CHECK(old->last_error().find("lock") != std::string::npos);
  old->close();
  // ...and its close did not release the taker's lock.
  const auto info = p.store->info("l");
  CHECK_FALSE(info.lock_owner.empty());
  CHECK(write_sync(*taker, 3, "y") == 0);
  std::string got;
  REQUIRE(read_sync(*taker, 0, 4, &got) == 0);
  CHECK(got == "newy");
}

TEST_CASE("a renewing holder keeps its lock past the lease", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("lock_renew");
  p.store->create("l", {65536, 65536});
  OpenOptions o;
  o.lock_lease_ms = 1500;
  o.lock_renew_ms = 200;
  auto holder = p.open("l", o);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  int code = 0;
  open_error(p, "l", {}, &code);
  CHECK(code == -EBUSY);
  CHECK(write_sync(*holder, 0, "still mine") == 0);
}
