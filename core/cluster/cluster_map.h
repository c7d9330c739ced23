// The cluster map: which OSDs exist (address, up/in, weight), which pools
// (size, min_size, pg_num, placement rule), and the placement map that
// turns a PG into an ordered set of OSDs. Versioned by epoch; the monitor
// is its only writer, everyone else holds read-only copies.
//
// OSD ids are placement device ids: device N in the placement map is
// osd.N. Marking an OSD out sets its device out in the placement map (its
// PGs move); marking it down only removes it from the acting sets (its PGs
// run degraded until it returns or is marked out).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/fullness.h"
#include "common/status.h"
#include "host/plugin_loader.h"
#include "placement/placement_map.h"
#include "placement/placer.h"
#include "placement/topology.h"

namespace strata::cluster {

using placement::PgId;

struct OsdInfo {
  int32_t id = -1;
  std::string addr;  // "127.0.0.1:6800"; empty until first boot
  bool up = false;
  bool in = true;
  uint32_t weight = 0x10000;  // 16.16
  uint64_t up_from = 0;
  uint64_t down_at = 0;
  uint64_t down_since_ms = 0;
  std::string host;
  // Set by the monitor from the OSD's reported usage (cluster/fullness.h).
  Fullness fullness = Fullness::kNone;
  bool operator==(const OsdInfo &) const = default;
};

struct PoolInfo {
  uint32_t id = 0;
  std::string name;
  uint32_t size = 3;
  uint32_t min_size = 2;
  uint32_t pg_num = 32;
  uint32_t rule = 0;
  bool operator==(const PoolInfo &) const = default;
};

// A filesystem (docs/FILESYSTEM.md): namespace in metadata_pool, file data
// in data_pool. Ids are never reused (fs_max).
struct FsInfo {
  uint32_t id = 0;
  std::string name;
  uint32_t metadata_pool = 0;
  uint32_t data_pool = 0;
  uint64_t created_epoch = 0;
  bool operator==(const FsInfo &) const = default;
};

// Wire values (MdsInfo.state, MdsBeacon.state): never renumber.
enum class MdsState : uint8_t {
  kStandby = 0,  // alive, serving nothing, ready to take over
  kReplay = 1,   // given a filesystem: fencing the old active, replaying its journal
  kActive = 2,   // serving clients
};

// A metadata server as the monitor sees it: alive (beaconing), where
// clients reach it, and what it serves. `incarnation` is the epoch at which
// it was given fs_id; an MDS acting for an older incarnation of the same fs
// is fenced (docs/FILESYSTEM.md, "Failover").
struct MdsInfo {
  std::string name;  // "a" for mds.a
  std::string addr;
  MdsState state = MdsState::kStandby;
  uint32_t fs_id = 0;
  uint64_t incarnation = 0;
  uint64_t up_from = 0;
  bool operator==(const MdsInfo &) const = default;
};

struct ClusterMap {
  uint64_t epoch = 0;
  std::string fsid;
  std::map<int32_t, OsdInfo> osds;
  std::map<uint32_t, PoolInfo> pools;
  std::string placement_plugin = "crush";
  placement::PlacementMap placement;
  uint64_t created_ms = 0, modified_ms = 0;
  // The highest pool id ever given out. A deleted pool's id is never given
  // to a new pool: a client (or an OSD) still holding the old one must not
  // reach the new pool's objects or PGs with it.
  uint32_t pool_max = 0;
  std::map<uint32_t, FsInfo> filesystems;
  std::map<std::string, MdsInfo> mds;  // by name
  uint32_t fs_max = 0;

  uint32_t next_pool_id() const;
  const FsInfo *fs_by_name(std::string_view name) const;
  // The MDS in state active for fs_id, or null (none yet, or failing over).
  const MdsInfo *active_mds(uint32_t fs_id) const;

  const PoolInfo *pool(uint32_t id) const;
  const PoolInfo *pool_by_name(std::string_view name) const;
  const OsdInfo *osd(int32_t id) const;
  bool operator==(const ClusterMap &) const = default;
};

// The Cap'n Proto form (wire::ClusterMap), as bytes: what the mon stores
// and sends.
std::string encode_map(const ClusterMap &m);
Result<ClusterMap> decode_map(std::string_view bytes);

// What changed between two consecutive maps, and applying it.
std::string encode_incremental(const ClusterMap &from, const ClusterMap &to);
Result<ClusterMap> apply_incremental(const ClusterMap &from, std::string_view incremental);

// A map with its placement plugin instantiated: PG lookups for one epoch.
// Immutable; share it between threads with shared_ptr.
class MapView {
 public:
  static Result<std::shared_ptr<const MapView>> create(ClusterMap map,
                                                       const host::Plugin &placement_plugin);
  const ClusterMap &map() const { return map_; }
  uint64_t epoch() const { return map_.epoch; }

  // The PG of an object in a pool (stable hash, see placement/pg.h).
  PgId pg_of(uint32_t pool, std::string_view oid) const;
  // The OSDs the placement map chooses for the PG, in order, including
  // down ones (the "up set" before failures).
  std::vector<int32_t> raw_set(PgId pg) const;
  // raw_set without the OSDs that are down: the OSDs that serve the PG now.
  // The first is the primary.
  std::vector<int32_t> acting(PgId pg) const;
  int32_t primary(PgId pg) const;  // -1 when no OSD is up for it

 private:
  MapView() = default;
  ClusterMap map_;
  std::shared_ptr<placement::Placer> placer_;  // null when the map has no rules
  // Over map_.placement, for the exception table; null when it is empty.
  std::shared_ptr<const placement::Topology> topo_;
};

}  // namespace strata::cluster
