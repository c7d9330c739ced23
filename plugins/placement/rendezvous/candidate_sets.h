// For every CHOOSE step of every rule and every bucket that step can start
// from, the flat list of what it chooses among: the devices under the bucket
// (tagged with the failure domain above them) for CHOOSELEAF, or the items
// of the wanted type for CHOOSE. Rendezvous hashing ignores the levels in
// between, so this list is all it needs. Built once in create().
#pragma once

#include <cstdint>
#include <vector>

#include "draw.h"
#include "plugin_topology.h"

namespace strata::placement_plugin {

struct Candidate {
  ItemKey key;          // item_key(id)
  int32_t id;           // device, or bucket of the wanted type
  int32_t domain;       // failure domain: the ancestor of the wanted type, or id
  double inv_weight;    // inverse_weight(class weight)
  uint32_t reweight;    // devices; 1.0 for buckets
  uint32_t is_device;
};

class CandidateSets {
 public:
  explicit CandidateSets(const PluginTopology &topo);

  // The candidates of step `step` of the rule at position `rule_pos` in the
  // map when it starts from bucket index `bucket`; nullptr if none.
  const std::vector<Candidate> *find(size_t rule_pos, size_t step, int bucket) const {
    const auto &by_bucket = index_[rule_pos][step];
    if (by_bucket.empty() || by_bucket[size_t(bucket)] < 0) return nullptr;
    return &sets_[size_t(by_bucket[size_t(bucket)])];
  }

 private:
  std::vector<Candidate> collect(const PluginTopology &topo, int bucket, uint32_t type, int cls,
                                 bool leaf) const;

  std::vector<std::vector<Candidate>> sets_;
  // [rule position][step][bucket index] -> position in sets_, or -1
  std::vector<std::vector<std::vector<int>>> index_;
};

}  // namespace strata::placement_plugin
