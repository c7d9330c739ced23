#include "cluster/cluster_map.h"

namespace strata::cluster {

const PoolInfo *ClusterMap::pool(uint32_t id) const {
  auto it = pools.find(id);
  return it == pools.end() ? nullptr : &it->second;
}

const PoolInfo *ClusterMap::pool_by_name(std::string_view name) const {
  for (const auto &[id, p] : pools)
    if (p.name == name) return &p;
  return nullptr;
}

const OsdInfo *ClusterMap::osd(int32_t id) const {
  auto it = osds.find(id);
  return it == osds.end() ? nullptr : &it->second;
}

}  // namespace strata::cluster
