// The OSD tests run on the shared cluster harness (tests/support).
#pragma once

#include "process_cluster.h"

namespace strata::osdtest {

using OsdCluster = testing::ProcessCluster;
using testing::plugin_dir;
using testing::strata_binary;

}  // namespace strata::osdtest
