// `strata frontend run --plugin NAME [--set key=value]...`: runs any
// frontend plugin (strata/frontend.h) on one cluster connection until
// SIGINT/SIGTERM, or until the plugin ends on its own, then stops it.
//
// The host's order of work: block the stop signals (before any thread
// exists, so that every thread, the plugin's included, inherits the mask),
// find the plugin, split --set between the plugin's options and the
// client's config, validate, connect, start, wait, stop, disconnect.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "cli/frontend_support.h"
#include "client/client_api_table.h"
#include "client/client_settings.h"
#include "common/log.h"
#include "host/frontend_host.h"
#include "host/plugin_loader.h"

namespace strata::cli {

namespace {

const char *kCmd = "frontend run";

const char *kUsage =
    "usage: strata frontend run --plugin NAME|FILE [--set key=value]... [common options]\n"
    "  Runs a frontend plugin (kind frontend, ABI 1.3) on a connection to the cluster until\n"
    "  SIGINT, SIGTERM or SIGHUP (or until the plugin ends on its own), then stops it\n"
    "  cleanly and disconnects.\n"
    "  --plugin NAME|FILE  the plugin: a name looked up on the plugin path (plugin_path,\n"
    "                      else the built-in path), or a file (a path containing '/')\n"
    "  --set key=value     an option of the plugin (`--plugin NAME --help` lists them),\n"
    "                      or else a client config key (mon_addr, keyring, ...)\n"
    "  SIGUSR1             prints the plugin's status (a line; the JSON object with\n"
    "                      --format json) and its metrics (Prometheus text) to stdout\n"
    "  exit status: 0 stopped cleanly (on a signal, or the plugin ended normally);\n"
    "  1 the frontend could not connect or start, failed, or did not stop cleanly;\n"
    "  2 usage: bad arguments, an unknown option or a bad option value\n";

void print_usage(std::FILE *out) {
  std::fputs(kUsage, out);
  std::fputs(common_options_help(), out);
}

}  // namespace

// --set key=value goes to the plugin when it declares the key, else to the
// client's config when the client knows it; anything else is a usage error.
Result<SplitSets> split_sets(const host::Plugin &p, const std::vector<std::string> &sets) {
  SplitSets out;
  auto client_specs = client::client_option_specs();
  for (const std::string &s : sets) {
    size_t eq = s.find('=');
    std::string key = s.substr(0, eq), value = s.substr(eq + 1);
    if (host::plugin_declares_option(p, key)) {
      out.plugin.emplace_back(key, value);
      continue;
    }
    bool client_key = false;
    for (const strata_option_spec *spec : client_specs) client_key |= key == spec->name;
    if (client_key) {
      out.client.push_back(s);
      continue;
    }
    // Let the plugin's own message list what it takes.
    auto r = host::resolve_plugin_options(p, {{key, value}});
    return Status::Error(EINVAL, "--set " + key + ": neither a client config key nor an " +
                                     "option of the plugin: " + r.status().message());
  }
  return out;
}

// The plugin_path the client config gives (the file, its sections, --set),
// "" when none: read through a cluster handle that is never connected.
static Result<std::string> configured_plugin_path(const CommonOptions &o) {
  for (const std::string &s : o.sets)
    if (s.rfind("plugin_path=", 0) == 0) return s.substr(std::strlen("plugin_path="));
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.conf_path = o.conf.empty() ? nullptr : o.conf.c_str();
  a.entity = o.name.empty() ? nullptr : o.name.c_str();
  strata_cluster_t c = nullptr;
  if (int rc = strata_cluster_create(&a, &c); rc < 0) return api_error(rc, "configuration");
  char buf[4096];
  int64_t n = strata_cluster_conf_get(c, "plugin_path", buf, sizeof buf);
  strata_cluster_shutdown(c);
  if (n < 0) return api_error(int(n), "plugin_path");
  if (size_t(n) >= sizeof buf) return Status::Error(ENAMETOOLONG, "plugin_path is too long");
  return std::string(buf, size_t(n));
}

Result<host::Plugin> find_frontend(const CommonOptions &o, const std::string &plugin) {
  if (plugin.find('/') != std::string::npos) return host::load_plugin(plugin, STRATA_KIND_FRONTEND);
  auto configured = configured_plugin_path(o);
  if (!configured.ok()) return configured.status();
  host::PluginRegistry registry(configured->empty() ? host::default_plugin_path()
                                                    : host::split_plugin_path(*configured));
  registry.scan();
  return registry.find(STRATA_KIND_FRONTEND, plugin);
}

static const char *type_name(uint32_t type) {
  switch (type) {
    case STRATA_OPT_INT:
      return "int";
    case STRATA_OPT_BOOL:
      return "bool";
    case STRATA_OPT_ENUM:
      return "enum";
    default:
      return "string";
  }
}

void print_plugin_options(const host::Plugin &p) {
  const strata_plugin_descriptor &d = p.descriptor();
  std::printf("\noptions of frontend plugin '%s' %s (%s):\n", p.name().c_str(), p.version().c_str(),
              p.path().c_str());
  if (d.n_options == 0) std::printf("  (none)\n");
  for (size_t i = 0; i < d.n_options; ++i) {
    const strata_option_spec &s = d.options[i];
    if (!s.name) continue;
    std::string type =
        s.type == STRATA_OPT_ENUM && s.enum_values ? s.enum_values : type_name(s.type);
    std::printf("  %-20s %s, default '%s'%s%s\n", s.name, type.c_str(),
                s.default_value ? s.default_value : "", s.help ? ": " : "", s.help ? s.help : "");
  }
}

// SIGUSR1: the status and the metrics, on stdout.
static void report_status(const host::FrontendInstance &fe, OutputFormat format, Logger &log) {
  bool json = format != OutputFormat::kText;
  auto status = fe.status(json ? STRATA_FRONTEND_STATUS_JSON : STRATA_FRONTEND_STATUS_LINE);
  auto metrics = fe.metrics();
  if (!status.ok()) log.warn("frontend " + fe.name(), status.status().ToString());
  if (!metrics.ok()) log.warn("frontend " + fe.name(), metrics.status().ToString());
  if (status.ok()) {
    if (json)
      print_json(*status, format);
    else
      std::printf("status: %s\n", status->c_str());
  }
  if (metrics.ok()) std::fwrite(metrics->data(), 1, metrics->size(), stdout);
  std::fflush(stdout);
}

// Waits for a stop signal or the plugin's stop request, answering SIGUSR1
// meanwhile. Returns the signal, or 0 for the plugin's request.
int wait_for_stop(const StopSignals &signals, const host::FrontendInstance &fe, OutputFormat format,
                  Logger &log) {
  for (;;) {
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {fe.stop_request_fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (fe.stop_request()) return 0;
    if (n > 0 && (fds[0].revents & POLLIN)) {
      int sig = signals.take();
      if (sig == SIGUSR1)
        report_status(fe, format, log);
      else if (sig != 0)
        return sig;
    }
  }
}

namespace {

int run(const CommonOptions &o, const std::string &plugin_arg, const StopSignals &signals) {
  auto plugin = find_frontend(o, plugin_arg);
  if (!plugin.ok()) return fail(kCmd, plugin.status());

  auto sets = split_sets(*plugin, o.sets);
  if (!sets.ok()) return usage_error(kCmd, sets.status().message(), "");
  auto options = host::resolve_plugin_options(*plugin, sets->plugin);
  if (!options.ok()) return usage_error(kCmd, options.status().message(), "");

  CommonOptions client_options = o;
  client_options.sets = sets->client;
  auto session = Session::open(client_options);
  if (!session.ok()) return fail(kCmd, session.status());
  strata_cluster_t cluster = (*session)->cluster();

  char level[16] = "info";
  strata_cluster_conf_get(cluster, "log_level", level, sizeof level);
  Logger log(std::max(0, Logger::parse_level(level)));
  const std::string component = "frontend " + plugin->name();

  auto fe =
      host::FrontendInstance::start(*plugin, cluster, client::client_api_table(), *options, log);
  if (!fe.ok()) return fail(kCmd, fe.status());
  auto line = (*fe)->status(STRATA_FRONTEND_STATUS_LINE);
  log.info(component,
           "started (" + plugin->path() + "): " + (line.ok() ? *line : line.status().ToString()));

  int sig = wait_for_stop(signals, **fe, o.format, log);
  auto request = (*fe)->stop_request();
  line = (*fe)->status(STRATA_FRONTEND_STATUS_LINE);
  if (sig != 0)
    log.info(component, std::string("stopping on SIG") + sigabbrev_np(sig) +
                            "; last status: " + (line.ok() ? *line : line.status().ToString()));
  else
    log.info(component,
             "stopping at the plugin's request (" +
                 (request->reason.empty() ? std::string("no reason given") : request->reason) +
                 ")");
  Status stopped = (*fe)->stop();
  if (!stopped.ok()) return fail(kCmd, stopped);
  log.info(component, "stopped");
  if (sig == 0 && request->result != 0)
    return fail(kCmd, Status::Error(request->result,
                                    "frontend " + plugin->name() + " failed: " + request->reason));
  return 0;
}

}  // namespace

int cmd_frontend(std::vector<std::string> args) {
  if (args.empty()) return usage_error("frontend", "missing command (run)", kUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    print_usage(stdout);
    return 0;
  }
  if (args[0] != "run")
    return usage_error("frontend", "unknown command '" + args[0] + "' (run)", kUsage);
  args.erase(args.begin());

  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage_error(kCmd, common.status().message(), kUsage);
  auto plugin = list.take("--plugin");
  if (!plugin.ok()) return usage_error(kCmd, plugin.status().message(), kUsage);
  auto rest = list.positional();
  if (!rest.ok()) return usage_error(kCmd, rest.status().message(), kUsage);
  if (!rest->empty())
    return usage_error(kCmd, "unexpected argument '" + rest->front() + "'", kUsage);

  if (common->help) {
    print_usage(stdout);
    // With --plugin, also what that plugin takes (best effort: --help never
    // fails on a config problem).
    if (*plugin) {
      auto p = find_frontend(*common, **plugin);
      if (p.ok())
        print_plugin_options(*p);
      else
        std::printf("\n(cannot list the options of '%s': %s)\n", (*plugin)->c_str(),
                    p.status().ToString().c_str());
    }
    return 0;
  }
  if (!*plugin || (*plugin)->empty()) return usage_error(kCmd, "--plugin is required", kUsage);

  // Before anything starts a thread (the client's, the plugin's).
  StopSignals signals;
  if (signals.fd() < 0) return fail(kCmd, Status::Error(errno, "signalfd failed"));
  return run(*common, **plugin, signals);
}

}  // namespace strata::cli
