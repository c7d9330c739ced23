// Reading the cluster settings every cluster command shares from the
// config: the monitor address, this entity's key, the monitor's own
// options. Used by `strata mon`, `strata up` and the MonClient's users.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "common/config.h"
#include "common/status.h"
#include "mon/mon_client.h"
#include "mon/monitor.h"

namespace strata::mon {

// "host:port" -> (host, port). Errors name the text.
Result<std::pair<std::string, uint16_t>> parse_host_port(const std::string &addr);

// Validates every key that applies to `entity` against the cluster and
// store option lists (so a shared [global] section passes everywhere).
Status validate_cluster_config(const Config &cfg, const std::string &entity);

// An integer option of `entity` (its default when unset).
Result<long long> config_int(const Config &cfg, const std::string &entity, const std::string &key);
std::string config_str(const Config &cfg, const std::string &entity, const std::string &key);

// mon_addr, keyring (the entity's secret) and the entity itself.
Result<MonClientOptions> mon_client_options(const Config &cfg, const std::string &entity);

// The monitor's options from [mon] / [global].
Result<MonitorOptions> monitor_options(const Config &cfg);

}  // namespace strata::mon
