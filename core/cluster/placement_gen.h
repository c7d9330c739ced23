// The placement map the monitor derives from its OSD table: root "default"
// -> one bucket per host -> devices osd.N (device id N, weight = the OSD's
// weight, out when the OSD is out). Two rules:
//   rule 0 (kRuleHost): replicas on distinct hosts
//   rule 1 (kRuleOsd):  replicas on distinct OSDs (small or one-host clusters)
// Regenerated whenever the OSD table changes; an operator never edits it.
#pragma once

#include <cstdint>
#include <map>

#include "cluster/cluster_map.h"

namespace strata::cluster {

constexpr uint32_t kRuleHost = 0;
constexpr uint32_t kRuleOsd = 1;
constexpr const char *kDefaultHost = "localhost";  // for OSDs that name none

// Builds the map for `osds`. Bucket ids of hosts already in `previous` are
// kept (straw2 hashes item ids, so renumbering a host would move data);
// new hosts get fresh ids. Exceptions of `previous` between devices that
// still exist are kept. With no OSD weight at all the map has no rules
// (nothing can be placed) but is still valid.
Result<placement::PlacementMap> generate_placement(const std::map<int32_t, OsdInfo> &osds,
                                                   const placement::PlacementMap &previous);

// Hosts with at least one in OSD of positive weight.
uint32_t count_hosts(const ClusterMap &m);

// The rule a new pool of `size` replicas gets: distinct hosts when there
// are enough of them, else distinct OSDs.
uint32_t default_rule(const ClusterMap &m, uint32_t size);

}  // namespace strata::cluster
