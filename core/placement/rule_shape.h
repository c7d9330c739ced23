// What a rule promises about a result, in the terms needed to check a
// device substitution: for each take..emit block, where it takes from (and
// which class), the types of its outer choose steps (a substitute must stay
// in the same such bucket) and the failure-domain type of its last choose
// step (a substitute must not share it with another replica).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "placement/placement_map.h"
#include "placement/topology.h"

namespace strata::placement {

struct RuleBlock {
  int32_t take = 0;
  std::string device_class;
  std::vector<uint32_t> outer_types;
  uint32_t domain_type = 0;  // 0: devices only need to be distinct
};

class RuleShape {
 public:
  explicit RuleShape(const Rule &rule);

  const std::vector<RuleBlock> &blocks() const { return blocks_; }
  // The block a device of a result belongs to: the first whose take and
  // class cover it; nullptr if none.
  const RuleBlock *block_of(const Topology &topo, int32_t device) const;
  // The failure-domain type of the rule's first block (what `test` checks).
  uint32_t domain_type() const { return blocks_.empty() ? 0 : blocks_[0].domain_type; }

 private:
  std::vector<RuleBlock> blocks_;
};

// True when `device` can receive data under `block`: it exists, is in,
// has weight, and lies under the block's take with the block's class.
bool device_eligible(const Topology &topo, const RuleBlock &block, int32_t device);

}  // namespace strata::placement
