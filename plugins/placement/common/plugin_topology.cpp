#include "plugin_topology.h"

#include <functional>

namespace strata::placement_plugin {

using sdk::make_error;

PluginTopology::PluginTopology(const sdk::PlacementMap &map) : map_(map) {
  index_items();
  check_forest();
  compute_class_weights();
  check_rules();
}

void PluginTopology::index_items() {
  // Ids index dense tables; a map with absurd ids is refused rather than
  // allocating gigabytes.
  constexpr int64_t kMaxId = 1 << 24;
  for (size_t i = 0; i < map_.devices.size(); ++i) {
    int32_t id = map_.devices[i].id;
    if (id < 0 || id >= kMaxId) throw make_error(EINVAL, "device id %d out of range", id);
    if (size_t(id) >= device_by_id_.size()) device_by_id_.resize(size_t(id) + 1, -1);
    if (device_by_id_[size_t(id)] >= 0) throw make_error(EINVAL, "duplicate device id %d", id);
    if (map_.devices[i].class_index >= int32_t(map_.class_names.size()))
      throw make_error(EINVAL, "device %d has unknown class index %d", id,
                       map_.devices[i].class_index);
    device_by_id_[size_t(id)] = int(i);
  }
  for (size_t i = 0; i < map_.buckets.size(); ++i) {
    const auto &b = map_.buckets[i];
    if (b.id >= 0 || -int64_t(b.id) > kMaxId)
      throw make_error(EINVAL, "bucket id %d out of range", b.id);
    size_t slot = size_t(-1 - int64_t(b.id));
    if (slot >= bucket_by_neg_id_.size()) bucket_by_neg_id_.resize(slot + 1, -1);
    if (bucket_by_neg_id_[slot] >= 0) throw make_error(EINVAL, "duplicate bucket id %d", b.id);
    if (b.type == 0) throw make_error(EINVAL, "bucket %d has the device type 0", b.id);
    if (b.items.size() != b.item_weights.size())
      throw make_error(EINVAL, "bucket %d: items and weights differ in length", b.id);
    bucket_by_neg_id_[slot] = int(i);
  }
}

int PluginTopology::bucket_index(int32_t id) const {
  if (id >= 0) return -1;
  size_t slot = size_t(-1 - int64_t(id));
  return slot < bucket_by_neg_id_.size() ? bucket_by_neg_id_[slot] : -1;
}

int PluginTopology::device_index(int32_t id) const {
  if (id < 0 || size_t(id) >= device_by_id_.size()) return -1;
  return device_by_id_[size_t(id)];
}

int64_t PluginTopology::item_type(int32_t id) const {
  if (id >= 0) return device_index(id) >= 0 ? 0 : -1;
  int b = bucket_index(id);
  return b < 0 ? -1 : int64_t(map_.buckets[size_t(b)].type);
}

uint32_t PluginTopology::device_reweight(int32_t id) const {
  int d = device_index(id);
  return d < 0 ? 0 : map_.devices[size_t(d)].reweight;
}

void PluginTopology::check_forest() const {
  std::vector<int> parent_of_device(map_.devices.size(), -1);
  std::vector<int> parent_of_bucket(map_.buckets.size(), -1);
  for (size_t b = 0; b < map_.buckets.size(); ++b) {
    for (int32_t item : map_.buckets[b].items) {
      int idx = item >= 0 ? device_index(item) : bucket_index(item);
      if (idx < 0)
        throw make_error(EINVAL, "bucket %d contains unknown item %d", map_.buckets[b].id, item);
      int &parent = item >= 0 ? parent_of_device[size_t(idx)] : parent_of_bucket[size_t(idx)];
      if (parent >= 0)
        throw make_error(EINVAL, "item %d is in two buckets (%d and %d)", item,
                         map_.buckets[size_t(parent)].id, map_.buckets[b].id);
      parent = int(b);
    }
  }
  // With one parent each, a cycle is a chain of parents that never ends.
  for (size_t b = 0; b < map_.buckets.size(); ++b) {
    int at = int(b);
    for (size_t steps = 0; at >= 0; ++steps) {
      if (steps > map_.buckets.size())
        throw make_error(EINVAL, "bucket %d is part of a cycle", map_.buckets[b].id);
      at = parent_of_bucket[size_t(at)];
    }
  }
}

void PluginTopology::compute_class_weights() {
  child_offset_.resize(map_.buckets.size());
  size_t total_children = 0;
  for (size_t b = 0; b < map_.buckets.size(); ++b) {
    child_offset_[b] = total_children;
    total_children += map_.buckets[b].items.size();
  }
  int n_tables = int(map_.class_names.size()) + 1;
  weights_.assign(size_t(n_tables), std::vector<uint64_t>(total_children, 0));
  totals_.assign(size_t(n_tables), std::vector<uint64_t>(map_.buckets.size(), 0));

  // The unfiltered tree uses the weights the host sent.
  for (size_t b = 0; b < map_.buckets.size(); ++b) {
    uint64_t sum = 0;
    for (size_t i = 0; i < map_.buckets[b].items.size(); ++i) {
      weights_[0][child_offset_[b] + i] = map_.buckets[b].item_weights[i];
      sum += map_.buckets[b].item_weights[i];
    }
    totals_[0][b] = sum;
  }
  // A class tree keeps the device weights of that class and re-sums buckets.
  for (int cls = 0; cls < n_tables - 1; ++cls) {
    std::vector<char> done(map_.buckets.size(), 0);
    std::function<uint64_t(size_t)> sum_bucket = [&](size_t b) -> uint64_t {
      if (done[b]) return totals_[size_t(cls + 1)][b];
      uint64_t sum = 0;
      const auto &bucket = map_.buckets[b];
      for (size_t i = 0; i < bucket.items.size(); ++i) {
        int32_t item = bucket.items[i];
        uint64_t w = 0;
        if (item >= 0) {
          const auto &dev = map_.devices[size_t(device_index(item))];
          w = dev.class_index == cls ? bucket.item_weights[i] : 0;
        } else {
          w = sum_bucket(size_t(bucket_index(item)));
        }
        weights_[size_t(cls + 1)][child_offset_[b] + i] = w;
        sum += w;
      }
      done[b] = 1;
      totals_[size_t(cls + 1)][b] = sum;
      return sum;
    };
    for (size_t b = 0; b < map_.buckets.size(); ++b) sum_bucket(b);
  }
}

const sdk::PlacementRule *PluginTopology::rule(uint32_t id) const {
  for (const auto &r : map_.rules)
    if (r.id == id) return &r;
  return nullptr;
}

void PluginTopology::check_rules() const {
  for (const auto &r : map_.rules) {
    for (const auto &s : r.steps) {
      switch (s.op) {
        case STRATA_PLACEMENT_STEP_TAKE:
          if (bucket_index(s.arg1) < 0)
            throw make_error(EINVAL, "rule '%s': take of unknown bucket %d", r.name.c_str(),
                             s.arg1);
          if (s.arg2 < -1 || s.arg2 >= int32_t(map_.class_names.size()))
            throw make_error(EINVAL, "rule '%s': unknown class index %d", r.name.c_str(), s.arg2);
          break;
        case STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN:
        case STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN:
          if (s.arg2 < 0) throw make_error(EINVAL, "rule '%s': negative type", r.name.c_str());
          break;
        case STRATA_PLACEMENT_STEP_EMIT:
          break;
        default:
          throw make_error(EOPNOTSUPP, "rule '%s': step op %u not supported", r.name.c_str(),
                           s.op);
      }
    }
  }
}

}  // namespace strata::placement_plugin
