// Inconsistent maps are refused by create() with -EINVAL, no handle, and a
// message that says what is wrong (placement.h, create()).
#include <cerrno>

#include "kit.h"

namespace strata::conformance {
namespace {

// Runs create() on `m` and checks the refusal.
void check_refused(CPlacementMap &c, const std::string &what) {
  CreateResult r = create_placement_rc(c.get(), host_services());
  INFO("map with " << what << ": create() -> " << errno_name(r.rc) << " \"" << r.message << "\"");
  if (r.rc == 0) placement_ops().destroy(r.handle);
  CHECK(Errno(r.rc) == Errno(-EINVAL));
  CHECK(r.handle == nullptr);
  CHECK_FALSE(r.message.empty());
}

void check_refused(const sdk::PlacementMap &m, const std::string &what) {
  CPlacementMap c(m);
  check_refused(c, what);
}

TEST_CASE("placement: an inconsistent map is refused with EINVAL and a message",
          "[placement][refused]") {
  sdk::PlacementMap m = test_cluster(2, 2, 2);
  // test_cluster: buckets[0] root, [1..2] racks, [3..6] hosts.
  SECTION("a duplicate device id") {
    m.devices[1].id = m.devices[0].id;
    check_refused(m, "a duplicate device id");
  }
  SECTION("a duplicate bucket id") {
    m.buckets[4].id = m.buckets[3].id;
    check_refused(m, "a duplicate bucket id");
  }
  SECTION("a bucket naming a child that does not exist") {
    m.buckets[3].items.push_back(4242);
    m.buckets[3].item_weights.push_back(STRATA_PLACEMENT_WEIGHT_ONE);
    check_refused(m, "an unknown child");
  }
  SECTION("an item in two buckets") {
    m.buckets[3].items.push_back(m.buckets[4].items[0]);
    m.buckets[3].item_weights.push_back(STRATA_PLACEMENT_WEIGHT_ONE);
    check_refused(m, "an item in two buckets");
  }
  SECTION("buckets in a cycle") {
    // The root becomes a child of one of its racks.
    m.buckets[1].items.push_back(kRootBucket);
    m.buckets[1].item_weights.push_back(STRATA_PLACEMENT_WEIGHT_ONE);
    check_refused(m, "a cycle");
  }
  SECTION("a bucket of the device type") {
    m.buckets[3].type = kTypeDevice;
    check_refused(m, "a bucket of type 0");
  }
  SECTION("a device of a class that does not exist") {
    m.devices[0].class_index = 3;
    check_refused(m, "an unknown class index");
  }
  SECTION("a rule taking a bucket that does not exist") {
    m.rules[0].steps[0].arg1 = -999;
    check_refused(m, "a TAKE of an unknown bucket");
  }
  SECTION("elements smaller than the ABI layout") {
    CPlacementMap c(m);
    c.get()->device_size = 4;
    check_refused(c, "4-byte device elements");
  }
}

TEST_CASE("placement: a refused map leaves nothing behind and a good map after it works",
          "[placement][refused]") {
  sdk::PlacementMap bad = test_cluster(1, 2, 2);
  bad.devices[1].id = 0;
  check_refused(bad, "a duplicate device id");
  FreshPlacement p(test_cluster(1, 2, 2));
  CHECK(p.map(kRuleHosts, 1, 2).size() == 2);
}

}  // namespace
}  // namespace strata::conformance
