// The monitor's side of the MDS daemons (docs/FILESYSTEM.md, "The fs map"):
// what their beacons mean for the map, which standby takes a filesystem
// without an MDS, when a silent MDS leaves the map. Pure map logic plus the
// mon-memory state the map does not hold (last beacon time and connection,
// standby-for, the figures `fs status` shows); the Monitor commits the maps
// it proposes. Not thread-safe: the Monitor calls it under its state lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/cluster_map.h"

namespace strata::mon {

// The figures of an MDS's last beacon (wire::MdsBeacon).
struct MdsStats {
  uint32_t sessions = 0;
  uint64_t leases = 0;
  uint64_t cache_bytes = 0;
  uint64_t cache_limit_bytes = 0;
  uint64_t inodes = 0;
  uint64_t journal_bytes = 0;
  uint64_t requests = 0;
  uint64_t journal_writes = 0;
  uint64_t apply_writes = 0;
  uint64_t purged_objects = 0;
  uint64_t at_ms = 0;  // when the beacon arrived (wall clock)
};

struct MdsBeaconInfo {
  std::string name;  // "a" for mds.a
  std::string addr;
  cluster::MdsState state = cluster::MdsState::kStandby;
  uint32_t fs_id = 0;
  uint64_t incarnation = 0;
  std::string want_fs;
  MdsStats stats;
};

class MdsTracker {
 public:
  // A beacon from mds.<b.name> on connection `conn` (any stable id of the
  // monitor session; a restarted daemon comes on a new one). Applies what
  // it means to `next` (a copy of the current map `cur`); true when `next`
  // changed. Log lines for the changes go to *events.
  bool on_beacon(const cluster::ClusterMap &cur, const MdsBeaconInfo &b, const void *conn,
                 uint64_t now_ms, cluster::ClusterMap &next, std::vector<std::string> *events);

  // Removes from `next` every MDS without a beacon for more than grace_ms;
  // true when something was removed.
  bool expire(uint64_t now_ms, uint64_t grace_ms, cluster::ClusterMap &next,
              std::vector<std::string> *events);

  // Gives every filesystem without an MDS in replay/active the first
  // standby (by name) that may take it: state replay at incarnation
  // next.epoch + 1, the epoch `next` (a copy of the current map) will be
  // committed as. True when it did.
  bool assign(cluster::ClusterMap &next, std::vector<std::string> *events) const;

  // The MDS daemons of a map loaded at startup get one grace from now.
  void adopt(const cluster::ClusterMap &m, uint64_t now_ms);

  // Forget what a removed MDS left behind.
  void forget(const std::string &name);

  // The monitor did not run for `ms` (Monitor::tick): beacons it could not
  // read in that time do not count against anyone.
  void excuse(uint64_t ms);

  const std::map<std::string, MdsStats> &stats() const { return stats_; }

 private:
  std::map<std::string, uint64_t> last_beacon_ms_;
  std::map<std::string, const void *> conn_;
  std::map<std::string, std::string> want_fs_;
  std::map<std::string, MdsStats> stats_;
};

// "mds.a" -> "a"; empty for any other entity (or a bad name).
std::string mds_name_of(const std::string &entity);

// The MDS state's name: "standby", "replay", "active".
const char *mds_state_name(cluster::MdsState s);

}  // namespace strata::mon
