// The plugin search path as every program builds it: directories the user
// names (--plugin-path, the config's plugin_path, $STRATA_PLUGIN_PATH) go in
// front of the built-in ones, never instead of them, so a configured
// directory adds plugins and cannot hide the shipped ones. Earlier
// directories win. (Implemented in plugin_loader.cpp.)
#pragma once

#include <string>
#include <vector>

namespace strata::host {

// The directories of a colon-separated list ("a:b::c" -> a, b, c; empty
// entries are skipped), as plugin_path and $STRATA_PLUGIN_PATH give them.
std::vector<std::string> split_plugin_path(const std::string &colon_list);

// `extra` (colon-separated: --plugin-path, then the config's plugin_path)
// in front of default_plugin_path(), which itself starts with the
// directories of $STRATA_PLUGIN_PATH, then the built-in directories.
std::vector<std::string> plugin_search_path(const std::string &extra);

}  // namespace strata::host
