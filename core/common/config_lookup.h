// Finding the config file a command reads, and checking any list of its
// entries with help for misspelt keys. (Implemented in config.cpp.)
#pragma once

#include <string>
#include <vector>

#include "common/config.h"

namespace strata {

// Where a command's config file comes from: the file named on the command
// line, else $STRATA_CONF, else ./strata.conf if it exists. `path` is empty
// when none applies; `looked_at` says what was tried, for the message that
// tells the user how to point at one.
struct ConfigLocation {
  std::string path;
  std::string looked_at;
};
ConfigLocation locate_config(const std::string &explicit_path);

// The known key closest to `key` by edit distance, when close enough to be
// a likely misspelling; "" otherwise.
std::string closest_key(const std::string &key, const std::vector<std::string> &known);

// Validates entries (e.g. every line of a file, whatever its section)
// against `specs`: unknown keys (with the closest known key when one is
// near; `unknown_hint` says where known keys come from) and bad values are
// collected into one error, one line per problem, each naming file:line.
// validate_config() is this for the entries that apply to one entity.
Status validate_entries(const std::vector<Config::Entry> &entries,
                        const std::vector<const strata_option_spec *> &specs,
                        const std::string &unknown_hint);

}  // namespace strata
