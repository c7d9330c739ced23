// Configuration keys of the cluster daemons and the client, validated like
// the store's (common/config.h). One list per entity type; the [global]
// keys apply to every entity.
#pragma once

#include <vector>

#include "strata/plugin.h"

namespace strata::cluster {

// Keys every entity reads ([global]): fsid, mon_addr, keyring, heartbeats.
const std::vector<strata_option_spec> &global_options();
const std::vector<strata_option_spec> &mon_options();
const std::vector<strata_option_spec> &osd_options();     // plus core_store_options()
const std::vector<strata_option_spec> &client_options();
const std::vector<strata_option_spec> &mds_options();  // `strata mds` ([mds]/[mds.NAME])

}  // namespace strata::cluster
