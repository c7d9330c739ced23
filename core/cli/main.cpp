// `strata`: one binary, one subcommand per job.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

#if __has_include("cli/cmd_placement.h")
#include "cli/cmd_placement.h"
#define STRATA_HAVE_PLACEMENT 1
#endif

namespace {

const char *kUsage =
    "usage: strata <command> ...\n"
    "  plugins list                 plugins on the plugin path (kind, name, version, ABI)\n"
    "  store mkfs|fsck|dump|bench|journal-swap   one object store, offline\n"
#ifdef STRATA_HAVE_PLACEMENT
    "  placement build|compile|decompile|test|diff|balance   placement maps\n"
#endif
    "Run `strata <command> --help` for its options.\n";

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "plugins") return strata::cli::cmd_plugins(args);
  if (cmd == "store") return strata::cli::cmd_store(args);
#ifdef STRATA_HAVE_PLACEMENT
  if (cmd == "placement") return cmd_placement(argc - 1, argv + 1);
#endif
  std::fprintf(stderr, "strata: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
