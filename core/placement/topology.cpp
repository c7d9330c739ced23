#include "placement/topology.h"

#include <functional>

namespace strata::placement {

Topology::Topology(const PlacementMap &map) : map_(map) {
  for (size_t i = 0; i < map.devices.size(); ++i) device_index_[map.devices[i].id] = i;
  for (size_t i = 0; i < map.buckets.size(); ++i) bucket_index_[map.buckets[i].id] = i;
  for (const Bucket &b : map.buckets)
    for (int32_t item : b.items) parent_[item] = b.id;
  std::function<uint64_t(int32_t)> sum = [&](int32_t id) -> uint64_t {
    if (id >= 0) return device(id) ? device(id)->weight : 0;
    if (auto it = weight_.find(id); it != weight_.end()) return it->second;
    uint64_t s = 0;
    for (int32_t child : bucket(id)->items) s += sum(child);
    return weight_[id] = s;
  };
  for (const Bucket &b : map.buckets) sum(b.id);
}

const Device *Topology::device(int32_t id) const {
  auto it = device_index_.find(id);
  return it == device_index_.end() ? nullptr : &map_.devices[it->second];
}

const Bucket *Topology::bucket(int32_t id) const {
  auto it = bucket_index_.find(id);
  return it == bucket_index_.end() ? nullptr : &map_.buckets[it->second];
}

uint32_t Topology::type_of(int32_t item) const {
  if (item >= 0) return device(item) ? 0 : UINT32_MAX;
  const Bucket *b = bucket(item);
  return b ? b->type : UINT32_MAX;
}

int32_t Topology::parent(int32_t item) const {
  auto it = parent_.find(item);
  return it == parent_.end() ? kNoItem : it->second;
}

int32_t Topology::ancestor_of_type(int32_t item, uint32_t type) const {
  for (int32_t at = item; at != kNoItem; at = parent(at))
    if (type_of(at) == type) return at;
  return kNoItem;
}

bool Topology::is_under(int32_t item, int32_t bucket) const {
  for (int32_t at = item; at != kNoItem; at = parent(at))
    if (at == bucket) return true;
  return false;
}

uint64_t Topology::subtree_weight(int32_t item, const std::string &cls) const {
  if (cls.empty()) {
    if (item >= 0) return device(item) ? device(item)->weight : 0;
    auto it = weight_.find(item);
    return it == weight_.end() ? 0 : it->second;
  }
  uint64_t sum = 0;
  for (int32_t d : item >= 0 ? std::vector<int32_t>{item} : devices_under(item))
    if (const Device *dev = device(d); dev && dev->device_class == cls) sum += dev->weight;
  return sum;
}

std::vector<int32_t> Topology::devices_under(int32_t bucket_id) const {
  std::vector<int32_t> out;
  std::function<void(int32_t)> walk = [&](int32_t id) {
    const Bucket *b = bucket(id);
    if (!b) return;
    for (int32_t child : b->items) {
      if (child >= 0)
        out.push_back(child);
      else
        walk(child);
    }
  };
  walk(bucket_id);
  return out;
}

}  // namespace strata::placement
