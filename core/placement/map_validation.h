// Consistency checks shared by every way a map enters the host (text,
// binary, built in code). Errors carry the source line when the map came
// from text, else the name of the offending entity.
#pragma once

#include <map>
#include <vector>

#include "common/status.h"
#include "placement/placement_map.h"

namespace strata::placement {

// Where each entity was written (1-based). Absent or 0: not from text.
struct SourceLines {
  std::vector<int> types, devices, buckets, rules;
  std::vector<std::vector<int>> bucket_items, rule_steps;  // [bucket][item], [rule][step]
  std::map<PgId, std::vector<int>> exceptions;             // [pg][remap]
};

// Checks: unique type/device/bucket/rule ids and names; type 0 present and
// no bucket of type 0; known items; every item in at most one bucket; no
// cycle; subtree weights within 16.16; reweights <= 1; rules well formed
// (take first, emit last, known buckets/classes/types) and satisfiable for
// at least one replica (and for every fixed count they name); exceptions
// between known devices. Returns the first problem found.
Status validate_map(const PlacementMap &map, const SourceLines *lines = nullptr);

// Whether `rule` can place num_rep replicas: every choose step finds enough
// distinct items of its type (with weight, in the rule's class) under each
// bucket it starts from. The error names the rule, the step and the counts.
Status check_rule_capacity(const PlacementMap &map, const Rule &rule, uint32_t num_rep);

}  // namespace strata::placement
