// The Store side of the cluster tests (kept apart from the client API, see
// osd_cluster.h): looking into, and tampering with, the stores of stopped
// OSDs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "osd_cluster.h"

namespace strata::osdtest {

// Every PG collection of the stores of `osds` (all stopped) holds the same
// objects with the same digests (data, xattrs, omap); and every object of
// `expect` is in each store with that content.
void require_replicas_identical(const OsdCluster &cl, const std::vector<int> &osds,
                                const std::map<std::string, std::string> &expect);

// Flips bits in the data of `oid` in PG collection `coll` of stopped OSD
// `osd`, leaving its size and xattrs (hence its version) alone.
void corrupt_object(const OsdCluster &cl, int osd, const std::string &coll, const std::string &oid);

}  // namespace strata::osdtest
