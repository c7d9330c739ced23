// The hierarchy laid out for fast straw2 draws: one tree per device class
// (plus one over every device), each bucket's children stored contiguously
// with the reciprocal of their weight precomputed. Children of zero weight
// are left out: they can never win, and leaving them out changes no other
// item's draw.
#pragma once

#include <cstdint>
#include <vector>

#include "draw.h"
#include "plugin_topology.h"

namespace strata::placement_plugin {

struct Straw2Child {
  ItemKey key;          // item_key(id)
  int32_t id;           // device (>= 0) or bucket (< 0)
  int32_t node;         // bucket index for buckets, -1 for devices
  double inv_weight;    // inverse_weight(weight)
  uint32_t type;        // 0 for devices
  uint32_t reweight;    // devices only
};

class Straw2Tree {
 public:
  // The tree of devices of class `cls` (kAllClasses for all).
  Straw2Tree(const PluginTopology &topo, int cls);

  // The winning child of bucket `node` for seed, or nullptr if the bucket
  // has nothing of positive weight.
  const Straw2Child *choose(int node, uint64_t seed) const {
    const Node &n = nodes_[size_t(node)];
    if (n.n_children == 0) return nullptr;
    const Straw2Child *c = &children_[n.first_child];
    // Branch-free minimum: which child wins is unpredictable, so selects
    // beat branches here (this loop is most of a mapping's time).
    uint32_t best = 0;
    Cost best_cost = kInfiniteCost;
    for (uint32_t i = 0; i < n.n_children; ++i) {
      Cost cost = draw_cost(seed, c[i].key, c[i].inv_weight);
      bool better = cost < best_cost;
      best_cost = better ? cost : best_cost;
      best = better ? i : best;
    }
    return &c[best];
  }

  int32_t bucket_id(int node) const { return nodes_[size_t(node)].id; }
  uint32_t bucket_type(int node) const { return nodes_[size_t(node)].type; }
  bool empty(int node) const { return nodes_[size_t(node)].n_children == 0; }

 private:
  struct Node {
    int32_t id;
    uint32_t type;
    uint32_t first_child;
    uint32_t n_children;
  };
  std::vector<Node> nodes_;  // indexed like the map's buckets
  std::vector<Straw2Child> children_;
};

}  // namespace strata::placement_plugin
