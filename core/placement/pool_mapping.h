// Every PG of one pool mapped at once: what the plugin says (raw) and what
// holds after the map's exception table (effective). The unit the balancer,
// `test --pg-num` and `diff --pg-num` work on.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "placement/placer.h"
#include "placement/placement_map.h"
#include "placement/topology.h"

namespace strata::placement {

struct PoolSpec {
  uint32_t pool = 1;
  uint32_t pg_num = 0;
  uint32_t rule = 0;
  uint32_t num_rep = 3;
};

struct PoolMapping {
  std::vector<std::vector<int32_t>> raw;        // [pg seed]
  std::vector<std::vector<int32_t>> effective;  // [pg seed]
};

// REQUIRES: `placer` and `topo` were made from the same map.
Result<PoolMapping> map_pool(const Placer &placer, const Topology &topo, const PoolSpec &spec);

}  // namespace strata::placement
