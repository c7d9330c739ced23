#include "straw2_tree.h"

namespace strata::placement_plugin {

Straw2Tree::Straw2Tree(const PluginTopology &topo, int cls) {
  const auto &buckets = topo.map().buckets;
  nodes_.reserve(buckets.size());
  for (size_t b = 0; b < buckets.size(); ++b) {
    Node n{buckets[b].id, buckets[b].type, uint32_t(children_.size()), 0};
    for (size_t i = 0; i < buckets[b].items.size(); ++i) {
      uint64_t w = topo.child_weight(int(b), i, cls);
      if (w == 0) continue;
      int32_t id = buckets[b].items[i];
      Straw2Child c{};
      c.id = id;
      c.key = item_key(id);
      c.inv_weight = inverse_weight(w);
      if (id >= 0) {
        c.node = -1;
        c.type = 0;
        c.reweight = topo.device_reweight(id);
      } else {
        c.node = topo.bucket_index(id);
        c.type = buckets[size_t(c.node)].type;
        c.reweight = STRATA_PLACEMENT_WEIGHT_ONE;
      }
      children_.push_back(c);
      ++n.n_children;
    }
    nodes_.push_back(n);
  }
}

}  // namespace strata::placement_plugin
