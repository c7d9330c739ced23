// Indexed, read-only view of a validated map for the host's hot paths
// (exception checks, statistics, the balancer): parents, types, ancestors
// and subtree weights by id in O(1) or O(depth).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "placement/placement_map.h"

namespace strata::placement {

// "No such item": not a valid device or bucket id.
constexpr int32_t kNoItem = INT32_MAX;

class Topology {
 public:
  // REQUIRES: validate_map(map) succeeded. Keeps a reference to `map`,
  // which must outlive the Topology.
  explicit Topology(const PlacementMap &map);

  const PlacementMap &map() const { return map_; }
  // nullptr when unknown.
  const Device *device(int32_t id) const;
  const Bucket *bucket(int32_t id) const;
  // 0 for devices; UINT32_MAX for unknown ids.
  uint32_t type_of(int32_t item) const;
  // The bucket holding `item`, or kNoItem for roots and unknown ids.
  int32_t parent(int32_t item) const;
  // `item` itself if it has `type`, else its nearest ancestor of `type`;
  // kNoItem if there is none.
  int32_t ancestor_of_type(int32_t item, uint32_t type) const;
  bool is_under(int32_t item, int32_t bucket) const;
  // Sum of device weights below (or of) `item`, counting only `cls` when
  // not empty.
  uint64_t subtree_weight(int32_t item, const std::string &cls = "") const;
  // Devices below `bucket` in child order.
  std::vector<int32_t> devices_under(int32_t bucket) const;

 private:
  const PlacementMap &map_;
  std::unordered_map<int32_t, size_t> device_index_, bucket_index_;
  std::unordered_map<int32_t, int32_t> parent_;
  std::unordered_map<int32_t, uint64_t> weight_;  // unfiltered subtree weights
};

}  // namespace strata::placement
