// The map as both placement plugins need it: items found by id, the type of
// every item, and the weight of every subtree counted over all devices or
// over the devices of one class only (the "shadow" hierarchy a class-
// restricted TAKE walks). Built once in create(); read-only afterwards, so
// map() may use it from any number of threads.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/cpp/placement.hpp"

namespace strata::placement_plugin {

constexpr int kAllClasses = -1;

class PluginTopology {
 public:
  // Checks what the plugins rely on (unique ids, known children, a forest,
  // rule steps with known buckets, classes and types) and throws
  // sdk::Error(EINVAL) naming the offending item otherwise.
  explicit PluginTopology(const sdk::PlacementMap &map);

  const sdk::PlacementMap &map() const { return map_; }
  size_t n_buckets() const { return map_.buckets.size(); }
  size_t n_classes() const { return map_.class_names.size(); }

  // Index into map().buckets / map().devices, or -1.
  int bucket_index(int32_t id) const;
  int device_index(int32_t id) const;
  // 0 for devices; -1 for unknown ids.
  int64_t item_type(int32_t id) const;
  uint32_t device_reweight(int32_t id) const;

  // Weight of child `i` of bucket `b` counting only devices of class `cls`
  // (kAllClasses: the weights the host sent).
  uint64_t child_weight(int b, size_t i, int cls) const {
    return weights_[size_t(cls + 1)][child_offset_[size_t(b)] + i];
  }
  uint64_t bucket_weight(int b, int cls) const { return totals_[size_t(cls + 1)][size_t(b)]; }

  const sdk::PlacementRule *rule(uint32_t id) const;

 private:
  void index_items();
  void check_forest() const;
  void compute_class_weights();
  void check_rules() const;

  sdk::PlacementMap map_;
  std::vector<int> bucket_by_neg_id_;  // [-1 - id] -> bucket index
  std::vector<int> device_by_id_;      // [id] -> device index
  std::vector<size_t> child_offset_;   // first child of bucket b in weights_[*]
  // [class + 1][child_offset_[b] + i] and [class + 1][b]
  std::vector<std::vector<uint64_t>> weights_;
  std::vector<std::vector<uint64_t>> totals_;
};

}  // namespace strata::placement_plugin
