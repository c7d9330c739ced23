// Snapshots on the OSDs' object snapshots: snapshot reads after every kind
// of change (against a model), removal trimming the clones, rollback, and
// snapshots asked of a live holder.
#include <catch2/catch.hpp>
#include <future>
#include <map>
#include <regex>
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

// Only the image's own objects are listed: the OSDs' clones never are.
void check_listing_has_no_clones(TestPool &p) {
  static const std::regex own(
      "rbd_(directory|header\\.[0-9a-f]{16}|data\\.[0-9a-f]{16}\\.[0-9a-f]{16})");
  for (const std::string &name : p.list_objects()) {
    INFO(name);
    CHECK(std::regex_match(name, own));
  }
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
    // Objects 0, 1 and 3 (recorded as absent); the second write to 0
    // carried no snapshot context.
    CHECK(img->stats().cow_copies == 3);
    REQUIRE(img->close() == 0);
  }
  // Object 1 is gone, its clone is not: snapshot "one" still reads it.
  CHECK_FALSE(p.object_exists(p.data_oid("s", 1)));
  CHECK(p.snap_clones(p.data_oid("s", 1)).size() == 1);
  check_listing_has_no_clones(p);
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

TEST_CASE("removing a snapshot trims the clones only it needed, the last one all of them",
          "[rbd][image][snap]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("snap_remove");
  p.store->create("s", {2 * kObj, kObj});
  const std::string v1 = pattern(2 * kObj, 5);
  write_once(p, "s", 0, v1);
  const auto s1 = p.store->snap_create("s", "one");
  const std::string v2 = pattern(kObj, 6);
  write_once(p, "s", 0, v2);  // object 0 preserved for "one"
  const auto s2 = p.store->snap_create("s", "two");
  const std::string v3 = pattern(2 * kObj, 7);
  write_once(p, "s", 0, v3);  // objects 0 and 1 preserved for "two"
  const std::string head0 = p.data_oid("s", 0), head1 = p.data_oid("s", 1);
  auto ids = [&](const std::string &oid) {
    std::vector<uint64_t> out;
    for (const auto &c : p.snap_clones(oid)) out.push_back(c.id);
    return out;
  };
  CHECK(ids(head0) == std::vector<uint64_t>{s1.id, s2.id});
  CHECK(ids(head1) == std::vector<uint64_t>{s2.id});  // serves "one" and "two"
  check_listing_has_no_clones(p);

  // "one" reads object 1 from the clone made for "two": removing "two" keeps it.
  p.store->snap_remove("s", "two");
  CHECK(ids(head0) == std::vector<uint64_t>{s1.id});
  CHECK(ids(head1) == std::vector<uint64_t>{s2.id});
  CHECK(first_difference(read_all(p, "s", "one"), v1) == -1);
  CHECK(error_of([&] { read_all(p, "s", "two"); }) == -ENOENT);

  p.store->snap_remove("s", "one");
  for (const std::string &oid : {head0, head1}) {
    uint64_t seq = 99;
    CHECK(p.snap_clones(oid, &seq).empty());
    CHECK(seq == 0);  // the snap set itself is gone
  }
  CHECK(p.store->info("s").snaps.empty());
  CHECK(first_difference(read_all(p, "s", ""), v3) == -1);
  CHECK(error_of([&] { p.store->snap_remove("s", "one"); }) == -ENOENT);
  p.store->remove("s");
  CHECK(p.list_objects() == std::vector<std::string>{"rbd_directory"});
}

TEST_CASE("every snapshot keeps its data through overwrites, discards, truncates and rollbacks",
          "[rbd][image][snap]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("snap_model");
  const uint64_t size = 6 * kObj;
  p.store->create("m", {size, kObj});
  std::string head(size, '\0');
  std::map<std::string, std::string> snaps;  // the model: name -> content
  auto check_all = [&](const char *when) {
    INFO(when);
    for (const auto &[name, want] : snaps) {
      INFO("snapshot " << name);
      CHECK(first_difference(read_all(p, "m", name), want) == -1);
    }
    CHECK(first_difference(read_all(p, "m", ""), head) == -1);
  };
  auto take = [&](const std::string &name) {
    p.store->snap_create("m", name);
    snaps[name] = head;
  };
  auto write = [&](strata::rbd::Image &img, uint64_t off, const std::string &d) {
    REQUIRE(write_sync(img, off, d) == 0);
    head.replace(off, d.size(), d);
  };
  auto discard = [&](strata::rbd::Image &img, uint64_t off, uint64_t len, bool zeroes) {
    REQUIRE((zeroes ? zeroes_sync(img, off, len) : discard_sync(img, off, len)) == 0);
    head.replace(off, len, std::string(len, '\0'));
  };

  {
    auto img = p.open("m");
    write(*img, 0, pattern(4 * kObj, 40));  // objects 4 and 5: holes
  }
  take("s1");
  const uint64_t du_s1 = p.store->du("m", "s1");
  CHECK(du_s1 == 4 * kObj);
  {
    auto img = p.open("m");
    write(*img, 100, pattern(5000, 41));              // part of object 0
    write(*img, kObj, pattern(kObj, 42));             // all of object 1
    write(*img, 4 * kObj + 7, pattern(300, 43));      // into a hole
    discard(*img, 2 * kObj, kObj, false);             // all of object 2
    discard(*img, 3 * kObj + 10, 300, true);          // part of object 3
    discard(*img, 4 * kObj - 50, 100, false);         // across objects 3 and 4
    // A discard of a missing object preserves nothing: the write after it
    // must still carry the snapshot context.
    discard(*img, 5 * kObj, kObj, false);
    write(*img, 5 * kObj + 20, pattern(50, 47));
  }
  CHECK_FALSE(p.object_exists(p.data_oid("m", 2)));
  check_all("after overwrites and discards");
  CHECK(p.store->du("m", "s1") == du_s1);  // the head's changes do not move it
  take("s2");

  // Truncate: shrink into object 3 (4 and 5 go), grow, write past the old end.
  p.store->resize("m", 3 * kObj + kObj / 2);
  head.resize(3 * kObj + kObj / 2);
  check_all("after a shrink");
  p.store->resize("m", size);
  head.resize(size, '\0');
  {
    auto img = p.open("m");
    write(*img, 5 * kObj + 1000, pattern(2000, 44));
  }
  check_all("after a grow and a write past the old end");
  take("s3");
  {
    auto img = p.open("m");
    write(*img, 0, pattern(size, 45));
  }
  check_all("after overwriting everything");
  check_listing_has_no_clones(p);

  // Rollback: the head is the snapshot again; every snapshot keeps its data,
  // and the head moves on from there.
  p.store->snap_rollback("m", "s2");
  head = snaps["s2"];
  check_all("after a rollback to s2");
  {
    auto img = p.open("m");
    write(*img, kObj / 2, pattern(kObj, 46));
    discard(*img, 3 * kObj, kObj, false);
  }
  check_all("after writes following the rollback");
  p.store->snap_rollback("m", "s1");
  head = snaps["s1"];
  check_all("after a rollback to s1");

  // Removing snapshots keeps the others' data; the last one takes every clone.
  p.store->snap_remove("m", "s2");
  snaps.erase("s2");
  check_all("after removing s2");
  p.store->snap_remove("m", "s1");
  p.store->snap_remove("m", "s3");
  snaps.clear();
  check_all("after removing every snapshot");
  for (uint64_t n = 0; n < 6; ++n) CHECK(p.snap_clones(p.data_oid("m", n)).empty());
  check_listing_has_no_clones(p);
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
  CHECK(img->stats().cow_copies >= 1);  // object 0, preserved for "live"
  CHECK(first_difference(read_all(p, "s", "live").substr(0, kObj), v1.substr(0, kObj)) == -1);
  // Removing the snapshot goes through the holder too: once it returns,
  // the holder's writes carry no context, so objects first written after
  // the removal (1..3 were never written since the snapshot) get no clone
  // that no snapshot would ever trim.
  p.store->snap_remove("s", "live");
  for (uint64_t o = 1; o < 4; ++o) REQUIRE(write_sync(*img, o * kObj, e) == 0);
  for (uint64_t o = 0; o < 8; ++o) {
    INFO("object " << o);
    CHECK(p.snap_clones(p.data_oid("s", o)).empty());
  }
  REQUIRE(img->close() == 0);
  CHECK(first_difference(read_all(p, "s", "").substr(0, kObj), e) == -1);
}
