// Every `strata` command in one table, and the layer all of them share:
// finding the command, --help (exit 0, to stdout) for every command and
// group, --version, one spelling of --format, the config check (unknown
// keys and bad values name file and line), and errors that name the
// command. A new command is one row in command_table.cpp; the CLI tests
// walk this table, so it is covered by them without being listed there.
#pragma once

#include <string>
#include <vector>

namespace strata::cli {

// Runs with the arguments after the command's first word (`strata osd tree
// --x` hands {"tree", "--x"} to the osd-admin handler), returns the exit
// code. Called with "--help" among its arguments, a handler prints its
// usage to stdout and returns 0.
using CommandHandler = int (*)(std::vector<std::string> args);

enum CommandTraits : unsigned {
  kNoTraits = 0,
  kReports = 1u << 0,          // offers --format text|json|json-pretty
  kMakesOwnConfig = 1u << 1,   // up/down: the config is the cluster's own, made by the command
  kNeedsCluster = 1u << 2,     // talks to a running cluster (fails fast without a config)
  kOwnSetKeys = 1u << 3,       // its --set also takes keys of the plugin it loads
                               // (frontend run --plugin FILE): it checks them itself
};

struct Command {
  const char *path;     // "store fsck"; a group ("store") has no handler
  const char *summary;  // one line, for listings
  CommandHandler run;   // nullptr for a group
  unsigned traits;
};

const std::vector<Command> &command_registry();

// The whole command line after the program name; returns the exit code.
int run_cli(const std::vector<std::string> &args);

}  // namespace strata::cli
