// Clones: reading through to the parent's snapshot, copy-up, flatten;
// snapshots of clones and clones of clones (reading through the chain).
#include <catch2/catch.hpp>

#include "image_test_support.h"

using namespace imagetest;
using strata::rbd::OpenOptions;

namespace {
constexpr uint32_t kObj = 65536;

std::string read_all(TestPool &p, const std::string &name, const std::string &snap = "") {
  OpenOptions o = read_only_opts();
  o.snap = snap;
  auto img = p.open(name, o);
  std::string got;
  REQUIRE(read_sync(*img, 0, img->size(), &got) == 0);
  return got;
}

void write_once(TestPool &p, const std::string &name, uint64_t off, const std::string &data) {
  auto img = p.open(name);
  REQUIRE(write_sync(*img, off, data) == 0);
  REQUIRE(img->close() == 0);
}
}  // namespace

TEST_CASE("a clone reads through to its parent's snapshot until written, then flattens",
          "[rbd][image][clone]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("clone_basic");
  p.store->create("parent", {4 * kObj, kObj});
  const std::string v1 = pattern(4 * kObj, 31);
  {
    auto img = p.open("parent");
    REQUIRE(write_sync(*img, 0, v1) == 0);
  }
  p.store->snap_create("parent", "base");
  CHECK(error_of([&] { p.store->clone("parent", "nope", *p.store, "child"); }) == -ENOENT);
  // The child is bigger than the snapshot: the rest reads zeros.
  p.store->clone("parent", "base", *p.store, "child", {5 * kObj, kObj});
  const auto info = p.store->info("child");
  REQUIRE(info.parent);
  CHECK(info.parent->image == "parent");
  CHECK(info.parent->snap_name == "base");
  CHECK(info.parent->overlap == 4 * kObj);
  CHECK(p.store->info("parent").snaps.at(0).children == 1);
  CHECK(error_of([&] { p.store->snap_remove("parent", "base"); }) == -EBUSY);

  // The parent's head moves on; the child keeps the snapshot's data.
  {
    auto img = p.open("parent");
    REQUIRE(write_sync(*img, 0, pattern(4 * kObj, 32)) == 0);
  }
  std::string want = v1 + std::string(kObj, '\0');
  CHECK(first_difference(read_all(p, "child"), want) == -1);

  {
    auto child = p.open("child");
    const std::string a = pattern(100, 33);
    REQUIRE(write_sync(*child, kObj + 10, a) == 0);       // copy-up of object 1
    REQUIRE(discard_sync(*child, 2 * kObj, kObj) == 0);  // object 2: zeros, not the parent's
    REQUIRE(zeroes_sync(*child, 3 * kObj + 5, 10) == 0); // copy-up, then zero
    want.replace(kObj + 10, 100, a);
    want.replace(2 * kObj, kObj, std::string(kObj, '\0'));
    want.replace(3 * kObj + 5, 10, std::string(10, '\0'));
    CHECK(child->stats().copy_ups == 3);
    std::vector<strata::rbd::Extent> ex;
    REQUIRE(child->extents(0, 5 * kObj, &ex) == 0);
    REQUIRE_FALSE(ex.empty());
    CHECK_FALSE(ex[0].hole);  // object 0 reads through: data
    std::string got;
    REQUIRE(read_sync(*child, 0, 5 * kObj, &got) == 0);
    CHECK(first_difference(got, want) == -1);
  }
  CHECK(p.object_exists(p.data_oid("child", 2)));
  CHECK_FALSE(p.object_exists(p.data_oid("child", 0)));

  p.store->flatten("child");
  CHECK_FALSE(p.store->info("child").parent);
  CHECK(p.store->info("parent").snaps.at(0).children == 0);
  CHECK(p.object_exists(p.data_oid("child", 0)));
  p.store->snap_remove("parent", "base");
  CHECK(first_difference(read_all(p, "child"), want) == -1);
  CHECK(error_of([&] { p.store->flatten("child"); }) == -EINVAL);
}

TEST_CASE("removing a clone gives its parent snapshot free", "[rbd][image][clone]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("clone_remove");
  p.store->create("parent", {kObj, kObj});
  p.store->snap_create("parent", "s");
  p.store->clone("parent", "s", *p.store, "child");
  CHECK(p.store->info("child").size == kObj);
  CHECK(error_of([&] { p.store->remove("parent"); }) == -ENOTEMPTY);
  p.store->remove("child");
  CHECK(p.store->info("parent").snaps.at(0).children == 0);
  p.store->snap_remove("parent", "s");
  p.store->remove("parent");
  CHECK(p.store->list().empty());
}

TEST_CASE("a clone's snapshots and a clone of a clone read through the chain; writes stay "
          "below; rollback",
          "[rbd][image][clone]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("clone_chain");
  p.store->create("p", {4 * kObj, kObj});
  const std::string pv = pattern(4 * kObj, 50);
  write_once(p, "p", 0, pv);
  p.store->snap_create("p", "a");
  p.store->clone("p", "a", *p.store, "c");

  // The clone's own snapshot: object 1 copied up before it, the others
  // read through to p@a then.
  std::string c1 = pv;
  const std::string w1 = pattern(100, 51);
  write_once(p, "c", kObj + 5, w1);
  c1.replace(kObj + 5, 100, w1);
  const auto snap_c1 = p.store->snap_create("c", "c1");
  CHECK(snap_c1.parent_overlap == 4 * kObj);
  std::string chead = c1;
  {
    auto img = p.open("c");
    const std::string w2 = pattern(kObj, 52), w3 = pattern(200, 53);
    REQUIRE(write_sync(*img, 0, w2) == 0);          // copy-up under the context
    REQUIRE(write_sync(*img, kObj + 50, w3) == 0);  // the clone's own object
    REQUIRE(discard_sync(*img, 2 * kObj, kObj) == 0);
    chead.replace(0, kObj, w2);
    chead.replace(kObj + 50, 200, w3);
    chead.replace(2 * kObj, kObj, std::string(kObj, '\0'));
  }
  // Object 0 did not exist in c at c1: the OSD says so, the read goes on to p@a.
  const auto c0 = p.snap_clones(p.data_oid("c", 0));
  REQUIRE(c0.size() == 1);
  CHECK(c0[0].exists == 0);
  CHECK(first_difference(read_all(p, "c", "c1"), c1) == -1);
  CHECK(first_difference(read_all(p, "c"), chead) == -1);

  // Shrinking c cuts its head's overlap, not its snapshot's.
  p.store->resize("c", 2 * kObj);
  chead.resize(2 * kObj);
  CHECK(first_difference(read_all(p, "c", "c1"), c1) == -1);

  // A clone of the clone's snapshot, larger than it: objects 2 and 3 read
  // through c@c1 on to p@a, object 4 is past every overlap.
  p.store->clone("c", "c1", *p.store, "d", {5 * kObj, kObj});
  std::string dv = c1 + std::string(kObj, '\0');
  CHECK(first_difference(read_all(p, "d"), dv) == -1);
  {
    auto img = p.open("d");
    const std::string w4 = pattern(300, 54);
    REQUIRE(write_sync(*img, 3 * kObj + 9, w4) == 0);  // copy-up from p@a, two levels down
    REQUIRE(write_sync(*img, 4 * kObj, w4) == 0);
    dv.replace(3 * kObj + 9, 300, w4);
    dv.replace(4 * kObj, 300, w4);
    CHECK(img->stats().copy_ups == 1);
  }
  CHECK(first_difference(read_all(p, "d"), dv) == -1);
  // Nothing written below reached a parent.
  CHECK(first_difference(read_all(p, "c", "c1"), c1) == -1);
  CHECK(first_difference(read_all(p, "c"), chead) == -1);
  CHECK(first_difference(read_all(p, "p", "a"), pv) == -1);
  CHECK(first_difference(read_all(p, "p"), pv) == -1);
  CHECK_FALSE(p.object_exists(p.data_oid("c", 3)));

  // Flattening c (it has a snapshot that reads through): its head stops
  // reading through, the link stays for c1.
  p.store->flatten("c");
  REQUIRE(p.store->info("c").parent);
  CHECK(p.store->info("c").parent->overlap == 0);
  CHECK(error_of([&] { p.store->flatten("c"); }) == -EINVAL);
  CHECK(first_difference(read_all(p, "c"), chead) == -1);
  CHECK(first_difference(read_all(p, "c", "c1"), c1) == -1);
  CHECK(error_of([&] { p.store->snap_remove("c", "c1"); }) == -EBUSY);  // d reads it
  p.store->flatten("d");
  CHECK_FALSE(p.store->info("d").parent);
  CHECK(first_difference(read_all(p, "d"), dv) == -1);
  CHECK(p.store->info("p").snaps.at(0).children == 1);
  // The last snapshot reading through takes the link along.
  p.store->snap_remove("c", "c1");
  CHECK_FALSE(p.store->info("c").parent);
  CHECK(p.store->info("p").snaps.at(0).children == 0);
  CHECK(first_difference(read_all(p, "c"), chead) == -1);
  p.store->snap_remove("p", "a");
  for (const char *img : {"d", "c", "p"}) p.store->remove(img);
  CHECK(p.list_objects() == std::vector<std::string>{"rbd_directory"});

  // Rolling a clone back to its snapshot: what it read through then, it
  // reads through again (the overlap too).
  p.store->create("q", {2 * kObj, kObj});
  const std::string qv = pattern(2 * kObj, 60);
  write_once(p, "q", 0, qv);
  p.store->snap_create("q", "a");
  p.store->clone("q", "a", *p.store, "e");
  p.store->snap_create("e", "before");
  write_once(p, "e", 10, pattern(2 * kObj - 20, 61));  // both objects copied up
  p.store->resize("e", kObj);                           // overlap down to one object
  p.store->snap_rollback("e", "before");
  CHECK(p.store->info("e").size == 2 * kObj);
  CHECK(p.store->info("e").parent->overlap == 2 * kObj);
  CHECK_FALSE(p.object_exists(p.data_oid("e", 0)));  // did not exist then
  CHECK(first_difference(read_all(p, "e"), qv) == -1);

  // A clone in another pool, and a clone of its snapshot there: reads go
  // back to this pool; flatten and remove count the parent's clones here.
  TestPool o("clone_chain_other");
  p.store->create("x", {2 * kObj, kObj});
  const std::string xv = pattern(2 * kObj, 62);
  write_once(p, "x", 0, xv);
  p.store->snap_create("x", "s");
  p.store->clone("x", "s", *o.store, "y");
  REQUIRE(o.store->info("y").parent);
  CHECK(o.store->info("y").parent->pool == "clone_chain");
  CHECK(p.store->info("x").snaps.at(0).children == 1);
  std::string yv = xv;
  const std::string w5 = pattern(64, 63);
  write_once(o, "y", kObj + 3, w5);  // copy-up across pools
  yv.replace(kObj + 3, 64, w5);
  CHECK(first_difference(read_all(o, "y"), yv) == -1);
  o.store->snap_create("y", "ys");
  o.store->clone("y", "ys", *o.store, "z");
  CHECK(first_difference(read_all(o, "z"), yv) == -1);  // object 0: two levels, two pools
  CHECK(first_difference(read_all(p, "x"), xv) == -1);
  CHECK(error_of([&] { p.store->snap_remove("x", "s"); }) == -EBUSY);
  o.store->remove("z");
  o.store->snap_remove("y", "ys");
  o.store->flatten("y");
  CHECK_FALSE(o.store->info("y").parent);
  CHECK(p.store->info("x").snaps.at(0).children == 0);
  CHECK(first_difference(read_all(o, "y"), yv) == -1);
  p.store->snap_remove("x", "s");
  o.store->remove("y");
  CHECK(o.list_objects() == std::vector<std::string>{"rbd_directory"});
}
