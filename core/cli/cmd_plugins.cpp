// `strata plugins list`: every plugin on the plugin path, and every file
// that was refused with the reason.
#include <cstdio>

#include "cli/cli_context.h"
#include "cli/commands.h"

namespace strata::cli {

int cmd_plugins(std::vector<std::string> args) {
  auto ctx = make_context(args);
  if (!ctx) return 1;
  if (args.size() != 1 || args[0] != "list") {
    std::fprintf(stderr, "usage: strata plugins list [--plugin-path DIRS]\n");
    return 2;
  }
  std::printf("%-10s %-12s %-9s %-5s %s\n", "KIND", "NAME", "VERSION", "ABI", "FILE");
  for (const host::Plugin &p : ctx->plugins->plugins()) {
    std::printf("%-10s %-12s %-9s %u.%u   %s\n", host::kind_name(p.kind()), p.name().c_str(),
                p.version().c_str(), p.descriptor().abi_major, p.descriptor().abi_minor,
                p.path().c_str());
  }
  for (const auto &r : ctx->plugins->refused()) std::printf("refused: %s\n", r.reason.c_str());
  if (ctx->plugins->plugins().empty()) {
    std::string path;
    for (const auto &d : ctx->plugins->search_path()) path += (path.empty() ? "" : ":") + d;
    std::fprintf(stderr, "strata: no plugins found on %s\n", path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace strata::cli
