// The kit's own command line, separated from the Catch2 arguments it passes
// through, and how the chosen kind narrows Catch2's test selection.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kit_state.h"
#include "strata/plugin.h"

namespace strata::conformance {

struct CommandLine {
  std::string kind;    // --kind: "backend", "journal" or "placement"
  std::string plugin;  // --plugin PATH
  std::string dir;     // --dir SCRATCH
  std::vector<std::pair<std::string, std::string>> options;  // --option key=value
  std::string format = "text";                               // --format text|json
  bool help = false;                                         // --help, -h, -?
  bool version = false;                                      // --version
  std::vector<std::string> catch_args;                       // everything else, in order
};

extern const char kUsage[];

// "strata-conformance 0.1.0 (plugin ABI 1.2)".
std::string version_line();

// Takes out the kit's options (as "--kind X" or "--kind=X"); on a malformed
// one returns nullopt with *error set.
std::optional<CommandLine> parse_command_line(int argc, char **argv, std::string *error);

// Narrows a Catch2 test spec to tests that also carry `tag`: the tag is
// ANDed into every comma-separated alternative ("a,b" -> "a[t],b[t]").
std::string restrict_to_tag(const std::string &spec, const std::string &tag);

// Checks `given` against the plugin's option specs the way the host does
// (unknown keys and unparsable values are refused), fills in the declared
// defaults, and stores the result in state.options. False with *error set
// on a refusal.
bool resolve_options(const strata_plugin_descriptor &d,
                     const std::vector<std::pair<std::string, std::string>> &given, KitState &state,
                     std::string *error);

}  // namespace strata::conformance
