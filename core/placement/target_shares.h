// What a perfect placement would give each device: the expected number of
// replicas per input. Within a choose step, items share the picks in
// proportion to their weight (weight x reweight, 0 when out), except that
// no failure domain can take more than one pick per input: shares above
// that cap are cut to it and the excess goes to the others ("water
// filling"). This is the "expected" of `test` and the base of the optimal
// movement of `diff`.
#pragma once

#include <cstdint>
#include <map>

#include "placement/placement_map.h"
#include "placement/topology.h"

namespace strata::placement {

// device id -> expected replicas per input; devices that can get nothing
// are absent. Sums to num_rep when the rule can be satisfied.
std::map<int32_t, double> expected_replicas_per_input(const Topology &topo, const Rule &rule,
                                                      uint32_t num_rep);

}  // namespace strata::placement
