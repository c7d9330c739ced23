// Running the built `strata` binary from a test: in a fresh empty
// directory, with no $STRATA_CONF, capturing exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"

namespace cli_test {

struct Outcome {
  int rc = -1;
  std::string out;
  std::string err;
};

// An empty scratch directory for this test process (removed at exit).
const std::string &scratch_dir();

// `strata <args>` run by the shell in scratch_dir(); `env` is prepended
// (e.g. "STRATA_PLUGIN_PATH=/x").
Outcome run_strata(const std::string &args, const std::string &env = "");

// Writes `text` to scratch_dir()/name and returns the path.
std::string write_file(const std::string &name, const std::string &text);

struct CommandInfo {
  std::string path;
  bool reports = false;
  bool needs_cluster = false;
  bool checks_config = false;
};
// Every command in the registry, from `strata commands --format json`.
std::vector<CommandInfo> registry();

}  // namespace cli_test
