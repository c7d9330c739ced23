// Snapshots: copy-on-write by the image's writer, snapshot reads, removal,
// rollback, and snapshots asked of a live holder.
#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "image_format.h"
#include "image_test_support.h"

using namespace imagetest;
using strata::rbd::OpenOptions;

namespace {
constexpr uint32_t kObj = 65536;

std::string read_all(TestPool &p, const std::string &name, const std::string &snap) {
  OpenOptions o;
  o.read_only = true;
  o.snap = snap;
  auto img = p.open(name, o);
  std::string got;
  REQUIRE(read_sync(*img, 0, img->size(), &got) == 0);
  return got;
}

// Writes `data` at off through a fresh read-write open.
void write_once(TestPool &p, const std::string &name, uint64_t off, const std::string &data) {
  auto img = p.open(name);
  REQUIRE(write_sync(*img, off, data) == 0);
  REQUIRE(img->close() == 0);
}
}  // namespace

TEST_CASE("a snapshot keeps the data as it was while the head moves on", "[rbd][image][snap]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("snap_basic");
  const uint64_t size = 4 * kObj;
  p.store->create("s", {size, kObj});
  std::string v1 = pattern(3 * kObj, 1) + std::string(kObj, '\0');  // object 3: a hole
  write_once(p, "s", 0, v1.substr(0, 3 * kObj));
  const auto s1 = p.store->snap_create("s", "one");
  CHECK(s1.id == 1);
  CHECK(s1.size == size);
  CHECK(error_of([&] { p.store->snap_create("s", "one"); }) == -EEXIST);

  // Overwrite part of object 0, discard object 1, write the hole (object 3).
  std::string v2 = v1;
  {
    auto img = p.open("s");
    const std::string a = pattern(1000, 2), b = pattern(kObj, 3);
    REQUIRE(write_sync(*img, 500, a) == 0);
    REQUIRE(discard_sync(*img, kObj, kObj) == 0);
    REQUIRE(write_sync(*img, 3 * kObj, b) == 0);
    REQUIRE(write_sync(*img, 600, a) == 0);  // a second write: no second copy
    v2.replace(500, 1000, a);
    v2.replace(600, 1000, a);
    v2.replace(kObj, kObj, std::string(kObj, '\0'));
    v2.replace(3 * kObj, kObj, b);
    CHECK(img->stats().cow_copies == 2);  // objects 0 and 1; 3 did not exist
    REQUIRE(img->close() == 0);
  }
  CHECK(first_difference(read_all(p, "s", "one"), v1) == -1);
  CHECK(first_difference(read_all(p, "s", ""), v2) == -1);
  CHECK(error_of([&] { read_all(p, "s", "none"); }) == -ENOENT);
  {
    OpenOptions o;
    o.snap = "one";
    auto snap = p.open("s", o);
    CHECK(snap->read_only());
    CHECK(snap->describe() == "snap_basic/s@one");
    CHECK(write_sync(*snap, 0, "x") == -EROFS);
  }

  // A second snapshot, more changes: both snapshots keep their own state.
  p.store->snap_create("s", "two");
  std::string v3 = v2;
  const std::string c = pattern(2 * kObj, 4);
  write_once(p, "s", kObj / 2, c);
  v3.replace(kObj / 2, 2 * kObj, c);
  CHECK(first_difference(read_all(p, "s", "one"), v1) == -1);
  CHECK(first_difference(read_all(p, "s", "two"), v2) == -1);
  CHECK(first_difference(read_all(p, "s", ""), v3) == -1);
  CHECK(p.store->info("s").snaps.size() == 2);
  CHECK(p.store->du("s", "one") > 0);
}

TEST_CASE("removing a snapshot drops the copies only it needed", "[rbd][image][snap]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("snap_remove");
  p.store->create("s", {2 * kObj, kObj});
  const std::string v1 = pattern(2 * kObj, 5);
  write_once(p, "s", 0, v1);
  const auto s1 = p.store->snap_create("s", "one");
  const std::string v2 = pattern(kObj, 6);
  write_once(p, "s", 0, v2);  // object 0 copied for "one"
  const auto s2 = p.store->snap_create("s", "two");
  const std::string v3 = pattern(2 * kObj, 7);
  write_once(p, "s", 0, v3);  // objects 0 and 1 copied for "two"
  const std::string head0 = p.data_oid("s", 0), head1 = p.data_oid("s", 1);
  auto copy = [&](const std::string &head, uint64_t id) {
    return head + "@" + strata::rbd::format::hex16(id);
  };
  CHECK(p.object_exists(copy(head0, s1.id)));
  CHECK(p.object_exists(copy(head0, s2.id)));
  CHECK(p.object_exists(copy(head1, s2.id)));
  CHECK_FALSE(p.object_exists(copy(head1, s1.id)));

  // "one" reads object 1 through "two"'s copy: removing "two" keeps it.
  p.store->snap_remove("s", "two");
  CHECK(p.object_exists(copy(head0, s1.id)));
  CHECK_FALSE(p.object_exists(copy(head0, s2.id)));
  CHECK(p.object_exists(copy(head1, s2.id)));
  CHECK(first_difference(read_all(p, "s", "one"), v1) == -1);
  CHECK(error_of([&] { read_all(p, "s", "two"); }) == -ENOENT);

  p.store->snap_remove("s", "one");
  CHECK_FALSE(p.object_exists(copy(head0, s1.id)));
  CHECK_FALSE(p.object_exists(copy(head1, s2.id)));
  CHECK(p.store->info("s").snaps.empty());
  CHECK(first_difference(read_all(p, "s", ""), v3) == -1);
  CHECK(error_of([&] { p.store->snap_remove("s", "one"); }) == -ENOENT);
}

TEST_CASE("rollback makes the head the snapshot again and keeps newer snapshots",
          "[rbd][image][snap]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("snap_rollback");
  p.store->create("s", {3 * kObj, kObj});
  const std::string v1 = pattern(kObj + 10, 8) + std::string(2 * kObj - 10, '\0');
  write_once(p, "s", 0, v1.substr(0, kObj + 10));
  p.store->snap_create("s", "one");
  const std::string v2 = pattern(3 * kObj, 9);
  write_once(p, "s", 0, v2);
  p.store->snap_create("s", "two");
  p.store->resize("s", 2 * kObj);
  {
    auto img = p.open("s");
    CHECK(error_of([&] { p.store->snap_rollback("s", "one"); }) == -EBUSY);
  }
  p.store->snap_rollback("s", "one");
  CHECK(p.store->info("s").size == 3 * kObj);
  CHECK(first_difference(read_all(p, "s", ""), v1) == -1);
  CHECK(first_difference(read_all(p, "s", "two"), v2) == -1);
  CHECK(first_difference(read_all(p, "s", "one"), v1) == -1);
}

TEST_CASE("a snapshot of an image open read-write is taken by its holder between writes",
          "[rbd][image][snap]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("snap_holder");
  p.store->create("s", {8 * kObj, kObj});
  auto img = p.open("s");
  const std::string v1 = pattern(8 * kObj, 10);
  REQUIRE(write_sync(*img, 0, v1) == 0);
  // Keep writing from another thread while the snapshot is asked for.
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    const std::string d = pattern(kObj, 11);
    for (uint64_t i = 0; !stop; ++i)
      if (write_sync(*img, (4 + i % 4) * kObj, d) != 0) ++failures;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto s = p.store->snap_create("s", "live");
  stop = true;
  writer.join();
  CHECK(failures == 0);
  CHECK(s.id == 1);
  const std::string snap = read_all(p, "s", "live");
  // Objects 0..3 were not touched after the first write.
  CHECK(first_difference(snap.substr(0, 4 * kObj), v1.substr(0, 4 * kObj)) == -1);
  // Every later object is wholly old or wholly new (a point between writes).
  const std::string d = pattern(kObj, 11);
  for (uint64_t o = 4; o < 8; ++o) {
    const std::string part = snap.substr(o * kObj, kObj);
    CHECK((part == d || part == v1.substr(o * kObj, kObj)));
  }
  // After the snapshot the holder preserves before writing.
  const std::string e = pattern(kObj, 12);
  REQUIRE(write_sync(*img, 0, e) == 0);
  CHECK(img->stats().cow_copies >= 1);
  CHECK(first_difference(read_all(p, "s", "live").substr(0, kObj), v1.substr(0, kObj)) == -1);
  REQUIRE(img->close() == 0);
  CHECK(first_difference(read_all(p, "s", "").substr(0, kObj), e) == -1);
}
