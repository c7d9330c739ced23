// The figures `strata placement test` and `diff` print: how evenly a map
// spreads replicas (per device: count, expected, deviation), whether any
// result breaks its failure domains, and how much data a change moves
// compared with the least any placement could move.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "placement/placement_map.h"
#include "placement/rule_shape.h"
#include "placement/topology.h"

namespace strata::placement {

// Produces the result for input number i (0 .. n_inputs-1).
using MappingSource = std::function<void(uint64_t i, std::vector<int32_t> &out)>;

struct DeviceUse {
  int32_t id = 0;
  uint64_t count = 0;
  double expected = 0;
  double deviation() const { return expected > 0 ? count / expected - 1.0 : 0.0; }
};

struct Utilization {
  std::vector<DeviceUse> devices;  // every device that is expected or used
  uint64_t inputs = 0;
  uint64_t replicas = 0;         // devices placed in total
  uint64_t short_results = 0;    // results with fewer than num_rep devices
  uint64_t domain_violations = 0;  // results with two replicas in one domain
  double max_deviation = 0;      // largest count/expected - 1 (over-full)
  double min_deviation = 0;      // smallest (most under-full)
  double stddev = 0;             // of count - expected, relative to mean expected
};

// REQUIRES: topo, rule from the same map.
Utilization measure_utilization(const Topology &topo, const Rule &rule, uint32_t num_rep,
                                uint64_t n_inputs, const MappingSource &source);

struct Movement {
  uint64_t inputs = 0;
  uint64_t inputs_changed = 0;  // any difference, order included
  uint64_t replicas = 0;        // replicas in the old results
  uint64_t replicas_moved = 0;  // devices in a new result that were not in the old
  double optimal = 0;           // least fraction of replicas any placement must move
  double moved_fraction() const { return replicas ? double(replicas_moved) / replicas : 0; }
  double changed_fraction() const { return inputs ? double(inputs_changed) / inputs : 0; }
  double ratio() const { return optimal > 0 ? moved_fraction() / optimal : 0; }
};

Movement measure_movement(uint64_t n_inputs, const MappingSource &old_source,
                          const MappingSource &new_source);

// The least fraction of replicas that must move to go from the ideal
// placement of one map to that of another: the sum of the share increases.
double optimal_movement(const std::map<int32_t, double> &old_expected,
                        const std::map<int32_t, double> &new_expected);

}  // namespace strata::placement
