// Clones: reading through to the parent's snapshot, copy-up, flatten.
#include <catch2/catch.hpp>

#include "image_test_support.h"

using namespace imagetest;
using strata::rbd::OpenOptions;

namespace {
constexpr uint32_t kObj = 65536;

std::string read_all(TestPool &p, const std::string &name) {
  auto img = p.open(name, read_only_opts());
  std::string got;
  REQUIRE(read_sync(*img, 0, img->size(), &got) == 0);
  return got;
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
  CHECK(error_of([&] { p.store->snap_create("child", "snap"); }) == -EOPNOTSUPP);
  CHECK(error_of([&] { p.store->remove("parent"); }) == -ENOTEMPTY);
  p.store->remove("child");
  CHECK(p.store->info("parent").snaps.at(0).children == 0);
  p.store->snap_remove("parent", "s");
  p.store->remove("parent");
  CHECK(p.store->list().empty());
}
