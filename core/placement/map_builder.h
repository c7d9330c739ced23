// Generated maps for `strata placement build`: a hierarchy given as levels
// from the top ("rack:2,host:5,device:4" = 2 racks of 5 hosts of 4
// devices) under one root called "default", with one replicated rule.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "placement/placement_map.h"

namespace strata::placement {

struct BuildSpec {
  // Top-down levels; the last must be "device".
  std::vector<std::pair<std::string, uint32_t>> levels;
  std::vector<Weight> weights{kWeightOne};  // cycled over the devices
  std::string device_class;                 // empty: none
  std::string failure_domain;               // empty: the level above devices
  std::string device_prefix = "osd.";
};

// Parses "rack:2,host:5,device:4".
Result<std::vector<std::pair<std::string, uint32_t>>> parse_layout(const std::string &text);

// Types: device = 0, then the levels bottom-up, then "root". Devices are
// numbered depth-first; the root is bucket -1, the others follow.
Result<PlacementMap> build_map(const BuildSpec &spec);

}  // namespace strata::placement
