// What every `strata` subcommand shares: the config file and --set
// overrides, the logger, and the plugin registry built from the plugin path.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/log.h"
#include "host/plugin_loader.h"

namespace strata::cli {

struct CliContext {
  Config config;
  Logger log{STRATA_LOG_INFO};
  std::unique_ptr<host::PluginRegistry> plugins;
  std::string entity = "osd";  // config section family the command reads
};

// Parses and strips the common options (--config/--conf/-c FILE, --set k=v,
// --plugin-path DIRS, --log-level L) from args, loads the config (the file
// given, else $STRATA_CONF, else ./strata.conf if present) and scans the
// plugin path (--plugin-path, then the config's plugin_path, then the
// built-in directories). On error prints it and returns nullptr.
std::unique_ptr<CliContext> make_context(std::vector<std::string> &args);

// Prints "strata: <message>" to stderr and returns the exit code 1.
int report(const Status &st);

}  // namespace strata::cli
