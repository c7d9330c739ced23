// Shared fixtures for the placement tests: maps built in code, plugins
// loaded from the build tree, and a placer per plugin.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "placement/map_builder.h"
#include "placement/placement_map.h"
#include "placement/placer.h"

namespace placement_test {

using namespace strata::placement;

// H hosts x D devices under root "default", rule 0 = chooseleaf by host.
PlacementMap hosts_map(uint32_t hosts, uint32_t devices, std::vector<Weight> weights = {kWeightOne});

// The plugin file libstrata_placement_<name>.so of this build.
std::string plugin_path(const std::string &name);
strata::host::Plugin load_placement_plugin(const std::string &name);
Placer make_placer(const std::string &plugin, const PlacementMap &map);

// Every plugin name, for GENERATE.
inline std::vector<std::string> all_plugins() { return {"crush", "rendezvous"}; }

// REQUIRES(text parses) and returns the map.
PlacementMap parse_ok(const std::string &text);

}  // namespace placement_test
