#include "cli/cli_context.h"

#include <cstdio>
#include <cstdlib>

#include "common/config_lookup.h"
#include "host/plugin_path.h"

namespace strata::cli {

int report(const Status &st) {
  std::fprintf(stderr, "strata: %s\n", st.ToString().c_str());
  return 1;
}

std::unique_ptr<CliContext> make_context(std::vector<std::string> &args) {
  auto ctx = std::make_unique<CliContext>();
  std::string config_path, plugin_path, log_level;
  std::vector<std::string> sets, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](const std::string &flag) -> std::string {
      if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0)
        return a.substr(flag.size() + 1);
      if (i + 1 < args.size()) return args[++i];
      std::fprintf(stderr, "strata: %s needs a value\n", flag.c_str());
      std::exit(2);
    };
    auto is = [&](const std::string &flag) {
      return a == flag || a.compare(0, flag.size() + 1, flag + "=") == 0;
    };
    if (is("--config")) config_path = value("--config");
    else if (is("--conf")) config_path = value("--conf");
    else if (a == "-c") config_path = value("-c");
    else if (is("--set")) sets.push_back(value("--set"));
    else if (is("--plugin-path")) plugin_path = value("--plugin-path");
    else if (is("--log-level")) log_level = value("--log-level");
    else rest.push_back(a);
  }
  args = rest;

  config_path = locate_config(config_path).path;
  if (!config_path.empty()) {
    auto cfg = Config::load_file(config_path);
    if (!cfg.ok()) {
      report(cfg.status());
      return nullptr;
    }
    ctx->config = std::move(*cfg);
  }
  for (const std::string &s : sets) {
    Status st = ctx->config.add_override(s);
    if (!st.ok()) {
      report(st);
      return nullptr;
    }
  }
  if (log_level.empty()) log_level = ctx->config.get(ctx->entity, "log_level").value_or("info");
  int lvl = Logger::parse_level(log_level);
  if (lvl < 0) {
    report(Status::Error(EINVAL, "bad log level '" + log_level + "' (debug, info, warn, error)"));
    return nullptr;
  }
  ctx->log.set_level(lvl);

  // --plugin-path, then the config's plugin_path, then the built-in path.
  std::string extra = ctx->config.get(ctx->entity, "plugin_path").value_or("");
  if (!plugin_path.empty()) extra = plugin_path + (extra.empty() ? "" : ":" + extra);
  std::vector<std::string> path = host::plugin_search_path(extra);
  ctx->plugins = std::make_unique<host::PluginRegistry>(path);
  ctx->plugins->scan();
  return ctx;
}

}  // namespace strata::cli
