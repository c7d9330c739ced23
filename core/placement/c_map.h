// The C structures of strata/placement.h for a map, owning every array they
// point into. Plugins copy what they need in create(), so a CMap only has to
// live for that call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "placement/placement_map.h"
#include "placement/topology.h"
#include "strata/placement.h"

namespace strata::placement {

class CMap {
 public:
  // REQUIRES: `topo` is the Topology of a validated map.
  explicit CMap(const Topology &topo);
  CMap(const CMap &) = delete;
  CMap &operator=(const CMap &) = delete;

  const strata_placement_map *get() const { return &map_; }

 private:
  std::vector<std::string> class_names_;
  std::vector<const char *> class_ptrs_;
  std::vector<strata_placement_type> types_;
  std::vector<strata_placement_device> devices_;
  std::vector<std::vector<int32_t>> items_;
  std::vector<std::vector<uint32_t>> item_weights_;
  std::vector<strata_placement_bucket> buckets_;
  std::vector<std::vector<strata_placement_step>> steps_;
  std::vector<strata_placement_rule> rules_;
  strata_placement_map map_{};
};

}  // namespace strata::placement
