// The exception table on top of any plugin's result: "in this PG, use
// device b instead of device a". It lets the balancer even out what
// pseudo-random placement leaves uneven, and lets a topology change keep
// data where it is. An entry only takes effect while it keeps the rule's
// promises; otherwise it is ignored (and the balancer drops it).
#pragma once

#include <cstdint>
#include <vector>

#include "placement/placement_map.h"
#include "placement/rule_shape.h"
#include "placement/topology.h"

namespace strata::placement {

// Whether result[pos] may be replaced by `to`: `to` is not in the result,
// is in and has weight, lies under the same take and class, stays inside
// the same bucket of every outer choose type, and shares the failure domain
// of no other replica.
bool substitution_allowed(const Topology &topo, const RuleShape &shape, const int32_t *result,
                          int n, int pos, int32_t to);

// Applies `remaps` in order to result[0..n): each whose `from` is present
// and whose substitution is allowed replaces it in place (so the primary
// stays first unless it is the one replaced). Returns how many applied.
int apply_exceptions(const Topology &topo, const RuleShape &shape,
                     const std::vector<Remap> &remaps, int32_t *result, int n);

}  // namespace strata::placement
