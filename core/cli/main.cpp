// `strata`: one binary, one subcommand per job.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cmd_placement.h"
#include "cli/commands.h"

namespace {

const char *kUsage =
    "usage: strata <command> ...\n"
    "  plugins list                 plugins on the plugin path (kind, name, version, ABI)\n"
    "  store mkfs|fsck|dump|bench|journal-swap   one object store, offline\n"
    "  placement build|compile|decompile|test|diff|balance   placement maps\n"
    "  mon                          run the monitor\n"
    "  osd                          run an OSD daemon\n"
    "  up|down                      start / stop a local cluster in one command\n"
    "  status                       cluster health, OSDs, PGs, usage\n"
    "  osd tree|ls|out|in|down|reweight|unhold   OSD administration\n"
    "  pool ls|create|rm|set|get    pools\n"
    "  object put|get|stat|ls|rm    objects\n"
    "  bench objects write|seq|rand  object benchmark (like rados bench)\n"
    "  pg ls|scrub|repair           placement groups\n"
    "  auth ls|add|rm               keys\n"
    "  frontend run --plugin NAME   run a frontend plugin until SIGINT/SIGTERM\n"
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
  if (cmd == "placement") return cmd_placement(argc - 1, argv + 1);
  static const char *kOsdAdmin[] = {"tree", "ls", "out", "in", "down", "reweight", "unhold"};
  if (cmd == "osd" && !args.empty()) {
    for (const char *a : kOsdAdmin)
      if (args[0] == a) return strata::cli::cmd_osd_admin(args);
  }
  if (cmd == "status") return strata::cli::cmd_status(args);
  if (cmd == "pool") return strata::cli::cmd_pool(args);
  if (cmd == "object") return strata::cli::cmd_object(args);
  if (cmd == "bench") return strata::cli::cmd_bench(args);
  if (cmd == "pg") return strata::cli::cmd_pg(args);
  if (cmd == "auth") return strata::cli::cmd_auth(args);
  if (cmd == "frontend") return strata::cli::cmd_frontend(args);
  if (cmd == "mon") return strata::cli::cmd_mon(args);
  if (cmd == "osd") return strata::cli::cmd_osd(args);
  if (cmd == "up") return strata::cli::cmd_up(args);
  if (cmd == "down") return strata::cli::cmd_down(args);
  std::fprintf(stderr, "strata: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
