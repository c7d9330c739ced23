// The OSD's runtime settings, read once at start from the config for
// entity "osd.N" (cluster keys: [global] + [osd] + [osd.N]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/status.h"

namespace strata::osd {

struct OsdConfig {
  int32_t id = -1;
  std::string fsid;
  std::string mon_addr;
  std::string keyring;
  std::string store_dir;
  int64_t heartbeat_interval_ms = 500;
  int64_t heartbeat_grace_ms = 3000;
  int64_t mon_keepalive_interval_ms = 1000;  // 0: no keepalive of the monitor session
  int64_t mon_keepalive_timeout_ms = 5000;
  std::string addr = "127.0.0.1";
  uint16_t port = 0;
  std::string host;  // placement host bucket; default: the machine's host name
  int op_threads = 2;
  int msg_threads = 1;    // the messenger's network threads (osd_msg_threads)
  int stage_threads = 2;  // StagePool: large writes staged as they arrive
  int recovery_max_active = 4;
  int pg_log_entries = 3000;
  // A primary whose own disk is this full refuses new writes (ENOSPC).
  double failsafe_full_ratio = 0.97;
  // osd_full_ratio (as mon_osd_full_ratio, whose map flag comes a report
  // and an epoch later): a primary whose own disk (or a replica's, as it
  // last said) is this full refuses writes that are not full_try. What
  // lies between this and the failsafe ratio is kept for the MDS's journal
  // and directories (full_try): the unlinks that give a full filesystem
  // its space back need it.
  double full_ratio = 0.95;
};

// Reads the cluster keys (global_options + osd_options) for osd.<id>;
// values were validated by the caller.
Result<OsdConfig> load_osd_config(const Config &cfg, int32_t id);

// The keys of the cluster option lists that apply to an OSD (so that the
// store's own validation can be given a config without them).
std::vector<std::string> cluster_keys_for_osd();

}  // namespace strata::osd
