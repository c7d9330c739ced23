// The config check every `strata` command runs before its own work: the
// whole file (every section) and the --set overrides against every key
// anybody declares (core, cluster, client, and each plugin on the plugin
// path), so that a misspelt key or a bad value is an error naming the file
// and line for every command, not only for the ones that happen to read it.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace strata::cli {

// `path`: the config file ("" when there is none); `sets`: "key=value" overrides; `plugin_path`:
// the --plugin-path flag, if given (the config's own plugin_path and the
// built-in directories follow it).
Status check_config(const std::string &path, const std::vector<std::string> &sets,
                    const std::string &plugin_path);

}  // namespace strata::cli
