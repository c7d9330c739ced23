#include "placement/c_map.h"

#include <algorithm>

namespace strata::placement {

CMap::CMap(const Topology &topo) {
  const PlacementMap &m = topo.map();
  class_names_ = m.device_classes();
  for (const std::string &c : class_names_) class_ptrs_.push_back(c.c_str());
  auto class_index = [&](const std::string &cls) -> int32_t {
    if (cls.empty()) return -1;
    auto it = std::find(class_names_.begin(), class_names_.end(), cls);
    return it == class_names_.end() ? -1 : int32_t(it - class_names_.begin());
  };

  for (const TypeDef &t : m.types) types_.push_back({t.id, 0, t.name.c_str()});
  for (const Device &d : m.devices)
    devices_.push_back({d.id, class_index(d.device_class), d.weight, d.effective_reweight()});
  items_.reserve(m.buckets.size());
  item_weights_.reserve(m.buckets.size());
  for (const Bucket &b : m.buckets) {
    items_.push_back(b.items);
    std::vector<uint32_t> w;
    for (int32_t item : b.items) w.push_back(uint32_t(topo.subtree_weight(item)));
    item_weights_.push_back(std::move(w));
    buckets_.push_back({b.id, b.type, STRATA_PLACEMENT_ALG_STRAW2, uint32_t(b.items.size()),
                        items_.back().data(), item_weights_.back().data()});
  }
  steps_.reserve(m.rules.size());
  for (const Rule &r : m.rules) {
    std::vector<strata_placement_step> steps;
    for (const Step &s : r.steps) {
      strata_placement_step cs{uint32_t(s.op), 0, 0, 0};
      if (s.op == StepOp::kTake) {
        cs.arg1 = s.bucket;
        cs.arg2 = class_index(s.device_class);
      } else if (s.op != StepOp::kEmit) {
        cs.arg1 = s.count;
        cs.arg2 = int32_t(s.type);
      }
      steps.push_back(cs);
    }
    steps_.push_back(std::move(steps));
    rules_.push_back({r.id, uint32_t(steps_.back().size()), steps_.back().data(), r.name.c_str()});
  }

  map_.struct_size = sizeof map_;
  map_.type_size = sizeof(strata_placement_type);
  map_.device_size = sizeof(strata_placement_device);
  map_.bucket_size = sizeof(strata_placement_bucket);
  map_.rule_size = sizeof(strata_placement_rule);
  map_.step_size = sizeof(strata_placement_step);
  map_.types = types_.data();
  map_.n_types = uint32_t(types_.size());
  map_.class_names = class_ptrs_.data();
  map_.n_class_names = uint32_t(class_ptrs_.size());
  map_.devices = devices_.data();
  map_.n_devices = uint32_t(devices_.size());
  map_.buckets = buckets_.data();
  map_.n_buckets = uint32_t(buckets_.size());
  map_.rules = rules_.data();
  map_.n_rules = uint32_t(rules_.size());
  map_.choose_total_tries = m.tunables.choose_total_tries;
}

}  // namespace strata::placement
