// Placement plugins go through the same host loader as every other kind:
// found on the plugin path, checked, and refused when asked for as
// something else.
#include "placement_test_support.h"

using namespace placement_test;

TEST_CASE("the placement plugins load through the host loader with their descriptors") {
  for (const std::string &name : all_plugins()) {
    auto p = strata::host::load_plugin(plugin_path(name), STRATA_KIND_PLACEMENT);
    INFO(p.status().message());
    REQUIRE(p.ok());
    CHECK(p.value().name() == name);
    CHECK(p.value().kind() == STRATA_KIND_PLACEMENT);
    CHECK(p.value().abi_minor() == STRATA_ABI_MINOR);
    CHECK(p.value().ops_size() == sizeof(strata_placement_ops));
    // ABI 1.3: the capabilities of a handle, asked through it.
    CHECK((make_placer(name, hosts_map(2, 2)).capabilities() &
           STRATA_PLACEMENT_CAP_DEVICE_CLASSES) != 0);
  }
}

TEST_CASE("the plugin registry finds placement plugins by name on the plugin path") {
  strata::host::PluginRegistry registry({STRATA_TEST_PLUGIN_DIR});
  registry.scan();
  for (const std::string &name : all_plugins())
    CHECK(registry.find(STRATA_KIND_PLACEMENT, name).ok());
  auto missing = registry.find(STRATA_KIND_PLACEMENT, "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("crush") && Catch::Contains("rendezvous"));
}

TEST_CASE("a placement plugin asked for as another kind is refused") {
  auto p = strata::host::load_plugin(plugin_path("crush"), STRATA_KIND_OBJECTSTORE);
  REQUIRE_FALSE(p.ok());
  CHECK_THAT(p.status().message(),
             Catch::Contains("kind mismatch") && Catch::Contains("placement plugin named 'crush'"));
}

TEST_CASE("a plugin refuses an inconsistent map with a message naming the problem") {
  // Hand-made C map, bypassing the host's own validation: one bucket with
  // a child that does not exist.
  int32_t items[] = {0, -77};
  uint32_t weights[] = {STRATA_PLACEMENT_WEIGHT_ONE, STRATA_PLACEMENT_WEIGHT_ONE};
  strata_placement_type types[] = {{0, 0, "device"}, {1, 0, "root"}};
  strata_placement_device devices[] = {{0, -1, STRATA_PLACEMENT_WEIGHT_ONE,
                                        STRATA_PLACEMENT_WEIGHT_ONE}};
  strata_placement_bucket buckets[] = {{-1, 1, STRATA_PLACEMENT_ALG_STRAW2, 2, items, weights}};
  strata_placement_map m{};
  m.struct_size = sizeof m;
  m.type_size = sizeof(strata_placement_type);
  m.device_size = sizeof(strata_placement_device);
  m.bucket_size = sizeof(strata_placement_bucket);
  m.rule_size = sizeof(strata_placement_rule);
  m.step_size = sizeof(strata_placement_step);
  m.types = types;
  m.n_types = 2;
  m.devices = devices;
  m.n_devices = 1;
  m.buckets = buckets;
  m.n_buckets = 1;
  for (const std::string &name : all_plugins()) {
    auto plugin = load_placement_plugin(name);
    const auto *ops = plugin.ops<strata_placement_ops>();
    strata_placement *handle = nullptr;
    strata_err err{};
    CHECK(ops->create(&m, nullptr, &handle, &err) == -EINVAL);
    CHECK(handle == nullptr);
    CHECK_THAT(std::string(err.msg), Catch::Contains("unknown item -77"));
    m.step_size = 4;  // smaller than the ABI 1.1 step: refused too
    CHECK(ops->create(&m, nullptr, &handle, &err) == -EINVAL);
    CHECK_THAT(std::string(err.msg), Catch::Contains("step elements of 4 bytes"));
    m.step_size = sizeof(strata_placement_step);
  }
}

TEST_CASE("the host refuses to hand a plugin an invalid map") {
  PlacementMap bad = hosts_map(3, 2);
  bad.buckets[1].items.push_back(-77);
  auto q = Placer::create(load_placement_plugin("crush"), bad);
  REQUIRE_FALSE(q.ok());
  CHECK_THAT(q.status().message(), Catch::Contains("unknown bucket id -77"));
}
