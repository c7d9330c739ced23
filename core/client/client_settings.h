// What a client reads from the configuration: who it is, where the monitor
// is, its key, timeouts. A client's entity "client.NAME" reads the
// overrides, [client.NAME], [client], [global].
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/status.h"
#include "strata/plugin.h"

namespace strata::client {

struct ClientSettings {
  std::string entity = "client.admin";
  std::string mon_addr;
  std::string keyring_path;
  std::string key_base64;  // takes precedence over the keyring file
  std::chrono::milliseconds op_timeout{0};       // 0: no timeout
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds mon_keepalive_interval{1000};  // 0: no pings
  std::chrono::milliseconds mon_keepalive_timeout{5000};
  std::string plugin_path;  // "" = host::default_plugin_path()
  int log_level = STRATA_LOG_WARN;
  std::string log_file;
  int io_threads = 1;
};

// The option specs a client knows: [global] keys, client keys, and the few
// core keys every program reads (plugin_path, log_level).
std::vector<const strata_option_spec *> client_option_specs();

// "client.NAME" with NAME made of letters, digits, '_', '-', '.'.
bool valid_client_entity(const std::string &entity);

// The entity a client runs as: `requested` if not empty, else the
// config's client_name (overrides, [client], [global]), else client.admin.
Result<std::string> resolve_client_entity(const Config &cfg, const std::string &requested);

// Validates and reads the settings of `entity`. Unknown keys in [client]
// and [client.NAME] sections (and in overrides) are errors; [global] keys
// that belong to other entities are not this client's concern and are
// ignored, but a bad value for a key the client reads is an error.
Result<ClientSettings> load_client_settings(const Config &cfg, const std::string &entity);

// The secret of `s.entity`: from `key` if set, else from the keyring file.
Result<std::string> load_client_secret(const ClientSettings &s);

}  // namespace strata::client
