// `strata plugins list`: every plugin on the plugin path, and every file
// that was refused with the reason.
#include <cstdio>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/output_format.h"
#include "common/json.h"

namespace strata::cli {

namespace {

const char *kUsage =
    "usage: strata plugins list [--plugin-path DIRS] [--format text|json|json-pretty]\n"
    "  --plugin-path DIRS   colon-separated directories searched before the config's\n"
    "                       plugin_path and the built-in directories\n"
    "common: --config FILE (or --conf), --set key=value, --log-level L\n";

std::string search_path_text(const host::PluginRegistry &r) {
  std::string path;
  for (const auto &d : r.search_path()) path += (path.empty() ? "" : ":") + d;
  return path;
}

json::Value plugins_json(const host::PluginRegistry &r) {
  json::Value plugins{json::Array{}}, refused{json::Array{}}, path{json::Array{}};
  for (const host::Plugin &p : r.plugins()) {
    json::Value row{json::Object{}};
    row.set("kind", host::kind_name(p.kind()));
    row.set("name", p.name());
    row.set("version", p.version());
    row.set("abi", std::to_string(p.descriptor().abi_major) + "." +
                       std::to_string(p.descriptor().abi_minor));
    row.set("file", p.path());
    plugins.push(row);
  }
  for (const auto &x : r.refused()) {
    json::Value row{json::Object{}};
    row.set("file", x.path);
    row.set("reason", x.reason);
    refused.push(row);
  }
  for (const auto &d : r.search_path()) path.push(d);
  json::Value out{json::Object{}};
  out.set("plugins", plugins);
  out.set("refused", refused);
  out.set("search_path", path);
  return out;
}

}  // namespace

int cmd_plugins(std::vector<std::string> args) {
  if (args.empty() || args[0] != "list") {
    std::fprintf(stderr, "strata plugins: which command? (list)\n%s", kUsage);
    return 2;
  }
  args.erase(args.begin());
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  auto ctx = make_context(args);
  if (!ctx) return 1;
  OutputFormat format = OutputFormat::kText;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string value;
    if (args[i] == "--format" && i + 1 < args.size()) value = args[++i];
    else if (args[i].rfind("--format=", 0) == 0) value = args[i].substr(9);
    else {
      std::fprintf(stderr, "strata plugins list: unknown option '%s'\n%s", args[i].c_str(),
                   kUsage);
      return 2;
    }
    auto f = parse_output_format(value);
    if (!f.ok()) return report(f.status().Context("plugins list"));
    format = *f;
  }
  const host::PluginRegistry &r = *ctx->plugins;
  if (format != OutputFormat::kText) {
    print_json(plugins_json(r).dump(), format);
  } else {
    std::printf("%-10s %-12s %-9s %-5s %s\n", "KIND", "NAME", "VERSION", "ABI", "FILE");
    for (const host::Plugin &p : r.plugins()) {
      std::printf("%-10s %-12s %-9s %u.%u   %s\n", host::kind_name(p.kind()), p.name().c_str(),
                  p.version().c_str(), p.descriptor().abi_major, p.descriptor().abi_minor,
                  p.path().c_str());
    }
    for (const auto &x : r.refused()) std::printf("refused: %s\n", x.reason.c_str());
  }
  if (r.plugins().empty()) {
    std::fprintf(stderr, "strata: no plugins found on %s\n", search_path_text(r).c_str());
    return 1;
  }
  return 0;
}

}  // namespace strata::cli
