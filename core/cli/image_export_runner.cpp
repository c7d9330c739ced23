#include "cli/image_export_runner.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "cli/background_frontend.h"
#include "client/client_api_table.h"

namespace strata::cli {

namespace {

int serve(const ImageExportRun &r, const StopSignals &signals, int ready) {
  auto plugin = find_frontend(r.common, "rbd");
  if (!plugin.ok()) return fail(r.cmd, plugin.status());
  auto sets = split_sets(*plugin, r.common.sets);
  if (!sets.ok()) return usage_error(r.cmd, sets.status().message(), "");
  // What the command's own flags say wins over --set.
  host::PluginOptions given = r.options;
  for (auto &kv : sets->plugin) {
    bool set_by_command = false;
    for (auto &own : r.options) set_by_command |= own.first == kv.first;
    if (!set_by_command) given.push_back(kv);
  }
  auto options = host::resolve_plugin_options(*plugin, given);
  if (!options.ok()) return usage_error(r.cmd, options.status().message(), "");

  CommonOptions client_options = r.common;
  client_options.sets = sets->client;
  auto session = Session::open(client_options);
  if (!session.ok()) return fail(r.cmd, session.status());
  strata_cluster_t cluster = (*session)->cluster();

  char level[16] = "info";
  strata_cluster_conf_get(cluster, "log_level", level, sizeof level);
  Logger log(std::max(0, Logger::parse_level(level)));

  auto fe =
      host::FrontendInstance::start(*plugin, cluster, client::client_api_table(), *options, log);
  if (!fe.ok()) return fail(r.cmd, fe.status());

  std::string state = frontend_state_file(r.state_kind, r.state_key);
  write_frontend_state(state);
  auto line = (*fe)->status(STRATA_FRONTEND_STATUS_LINE);
  std::string text = line.ok() ? *line : line.status().ToString();
  log.info(r.cmd, text);
  if (!r.ready_text.empty() || r.print_ready_line) {
    std::printf("%s\n", r.ready_text.empty() ? text.c_str() : r.ready_text.c_str());
    std::fflush(stdout);
  }
  report_ready(ready);

  int sig = wait_for_stop(signals, **fe, r.common.format, log);
  log.info(r.cmd, sig != 0 ? std::string("stopping on SIG") + sigabbrev_np(sig)
                           : std::string("stopping: the export ended"));
  Status stopped = (*fe)->stop();
  ::unlink(state.c_str());
  if (!stopped.ok()) return fail(r.cmd, stopped);
  auto request = (*fe)->stop_request();
  if (sig == 0 && request && request->result != 0)
    return fail(r.cmd, Status::Error(request->result, "the export failed: " + request->reason));
  return 0;
}

}  // namespace

int run_image_export(const ImageExportRun &r) {
  if (r.background)
    return serve_in_background(
        r.cmd, [&](const StopSignals &signals, int ready) { return serve(r, signals, ready); });
  // Before anything starts a thread (the client's, the plugin's).
  StopSignals signals;
  if (signals.fd() < 0) return fail(r.cmd, Status::Error(errno, "signalfd failed"));
  return serve(r, signals, -1);
}

void print_rbd_plugin_options(const CommonOptions &common) {
  auto p = find_frontend(common, "rbd");
  if (p.ok())
    print_plugin_options(*p);
  else
    std::printf("\n(cannot list the options of the rbd plugin: %s)\n",
                p.status().ToString().c_str());
}

}  // namespace strata::cli
