#include "placement/rule_shape.h"

namespace strata::placement {

RuleShape::RuleShape(const Rule &rule) {
  RuleBlock current;
  std::vector<uint32_t> choose_types;
  for (const Step &s : rule.steps) {
    switch (s.op) {
      case StepOp::kTake:
        current = RuleBlock{};
        choose_types.clear();
        current.take = s.bucket;
        current.device_class = s.device_class;
        break;
      case StepOp::kChoose:
      case StepOp::kChooseleaf:
        choose_types.push_back(s.type);
        break;
      case StepOp::kEmit:
        if (!choose_types.empty()) {
          current.domain_type = choose_types.back();
          current.outer_types.assign(choose_types.begin(), choose_types.end() - 1);
        }
        blocks_.push_back(current);
        choose_types.clear();
        break;
    }
  }
}

bool device_eligible(const Topology &topo, const RuleBlock &block, int32_t device) {
  const Device *d = topo.device(device);
  if (!d || d->weight == 0 || d->effective_reweight() == 0) return false;
  if (!block.device_class.empty() && d->device_class != block.device_class) return false;
  return topo.is_under(device, block.take);
}

const RuleBlock *RuleShape::block_of(const Topology &topo, int32_t device) const {
  const Device *d = topo.device(device);
  if (!d) return nullptr;
  for (const RuleBlock &b : blocks_)
    if ((b.device_class.empty() || d->device_class == b.device_class) &&
        topo.is_under(device, b.take))
      return &b;
  return nullptr;
}

}  // namespace strata::placement
