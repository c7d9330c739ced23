#include "cluster/cluster_map.h"

#include <algorithm>

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

uint32_t ClusterMap::next_pool_id() const {
  // Maps written before pool_max existed: the highest live id is the best
  // record there is.
  uint32_t highest = pools.empty() ? pool_max : std::max(pool_max, pools.rbegin()->first);
  return highest + 1;  // 0 after the last id: the caller refuses
}

const FsInfo *ClusterMap::fs_by_name(std::string_view name) const {
  for (const auto &[id, f] : filesystems)
    if (f.name == name) return &f;
  return nullptr;
}

const MdsInfo *ClusterMap::active_mds(uint32_t fs_id) const {
  for (const auto &[name, m] : mds)
    if (m.fs_id == fs_id && m.state == MdsState::kActive) return &m;
  return nullptr;
}

const OsdInfo *ClusterMap::osd(int32_t id) const {
  auto it = osds.find(id);
  return it == osds.end() ? nullptr : &it->second;
}

}  // namespace strata::cluster
