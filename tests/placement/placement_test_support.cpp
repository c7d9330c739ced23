#include "placement_test_support.h"

#include "placement/text_format.h"

namespace placement_test {

PlacementMap hosts_map(uint32_t hosts, uint32_t devices, std::vector<Weight> weights) {
  BuildSpec spec;
  spec.levels = {{"host", hosts}, {"device", devices}};
  spec.weights = std::move(weights);
  auto m = build_map(spec);
  REQUIRE(m.ok());
  return m.value();
}

std::string plugin_path(const std::string &name) {
  return std::string(STRATA_TEST_PLUGIN_DIR) + "/libstrata_placement_" + name + ".so";
}

strata::host::Plugin load_placement_plugin(const std::string &name) {
  auto p = strata::host::load_plugin(plugin_path(name), STRATA_KIND_PLACEMENT);
  INFO(p.status().message());
  REQUIRE(p.ok());
  return p.value();
}

Placer make_placer(const std::string &plugin, const PlacementMap &map) {
  auto p = Placer::create(load_placement_plugin(plugin), map);
  INFO(p.status().message());
  REQUIRE(p.ok());
  return std::move(p.value());
}

PlacementMap parse_ok(const std::string &text) {
  auto m = parse_text(text);
  INFO(m.status().message());
  REQUIRE(m.ok());
  return m.value();
}

}  // namespace placement_test
