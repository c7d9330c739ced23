// What the placement suite checks of every result, and how it maps many
// inputs at once. Shared by the placement_*.cpp suite files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kit.h"

namespace strata::conformance {

using Placements = std::vector<std::vector<int32_t>>;

// The results of inputs 0 .. n-1.
Placements map_inputs(const FreshPlacement &p, uint32_t rule, uint32_t num_rep, uint32_t n);

// "" when `result` (of input x) holds only devices of the map that can hold
// data (weight and reweight above 0), each once, each under a different
// item of `domain_type` (kTypeDevice: no constraint beyond distinct
// devices); otherwise what is wrong, naming the input and the result.
std::string result_problem(const sdk::PlacementMap &map, uint32_t x,
                           const std::vector<int32_t> &result, uint32_t domain_type);
// The first problem among many results, or "".
std::string first_problem(const sdk::PlacementMap &map, const Placements &results,
                          uint32_t domain_type);

// The share of replicas that changed device between two mappings of the
// same inputs: for each input, the devices of `before` missing from
// `after`, over all devices of `before`.
double moved_share(const Placements &before, const Placements &after);

// How many times each device id occurs in the results (index = id).
std::vector<uint64_t> device_counts(const Placements &results, size_t n_devices);

std::string describe(const std::vector<int32_t> &devices);

}  // namespace strata::conformance
