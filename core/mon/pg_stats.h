// What the OSDs last told the monitor about their PGs and disks (OsdStats
// beacons), and the cluster summary `status` and `pg ls` derive from it
// against the current map. In memory only: after a monitor restart the
// OSDs' next beacons (every heartbeat interval) fill it again.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/cluster_map.h"
#include "common/json.h"

namespace strata::mon {

using cluster::PgId;

struct PgStatEntry {
  PgId pg;
  std::string state;  // "active+clean", "active+degraded", "peering", ...
  uint64_t objects = 0, bytes = 0, last_update = 0, epoch = 0;
  std::vector<int32_t> acting;  // as the reporting primary saw it
  // Objects scrub or a failed read found damaged: (oid, why), the first
  // few of damaged_total; and copies the primary replaced after a failed read.
  std::vector<std::pair<std::string, std::string>> damaged = {};
  uint64_t damaged_total = 0;
  uint64_t read_repairs = 0;
};

struct OsdStatEntry {
  int32_t id = -1;
  uint64_t epoch = 0;
  std::vector<PgStatEntry> pgs;
  uint64_t used_bytes = 0, total_bytes = 0;
  std::vector<std::string> warnings;
};

// One PG as the monitor sees it now.
struct PgRow {
  PgId pg;
  std::string state;
  std::vector<int32_t> up;  // raw set
  std::vector<int32_t> acting;
  uint64_t objects = 0, bytes = 0, last_update = 0;
  std::vector<std::pair<std::string, std::string>> damaged = {};
  uint64_t damaged_total = 0;
  uint64_t read_repairs = 0;
};

struct ClusterSummary {
  std::string health;  // HEALTH_OK | HEALTH_WARN | HEALTH_ERR
  std::vector<std::string> warnings;
  uint32_t osds = 0, osds_up = 0, osds_in = 0;
  uint32_t pools = 0, pgs = 0;
  std::map<std::string, uint32_t> pgs_by_state;
  uint64_t objects = 0, bytes = 0, used_bytes = 0, total_bytes = 0;
  // "nearfull" / "backfillfull" / "full" -> the OSDs the map marks so.
  std::map<std::string, std::vector<int32_t>> osds_by_fullness;
  struct Damaged {
    PgId pg;
    std::string oid, why;
  };
  std::vector<Damaged> damaged;  // named in health (the first few per PG)
  uint64_t damaged_total = 0;
  uint64_t read_repairs = 0;

  json::Value to_json() const;
  std::string to_text(const cluster::ClusterMap &m) const;
};

// REQUIRES: external synchronisation (the monitor's lock).
class PgStatsTable {
 public:
  void update(OsdStatEntry e);
  void drop(int32_t osd) {
    osds_.erase(osd);
    index_.erase(osd);
  }
  const std::map<int32_t, OsdStatEntry> &osds() const { return osds_; }

  // Every PG of `pool` (all pools when pool < 0), in PG order. A PG's state
  // is its current primary's report when that report saw the same acting
  // set; "peering" when the primary reported another acting set (the map
  // moved on), "unknown" when it has not reported the PG yet, "down" when
  // no OSD of the PG is up.
  std::vector<PgRow> pgs(const cluster::MapView &view, int64_t pool = -1) const;

  ClusterSummary summary(const cluster::MapView &view) const;

 private:
  std::map<int32_t, OsdStatEntry> osds_;
  std::map<int32_t, std::map<PgId, size_t>> index_;  // osd -> pg -> position in its pgs
};

}  // namespace strata::mon
