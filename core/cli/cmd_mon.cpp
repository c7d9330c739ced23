// `strata mon --conf F [--mkfs] [--set k=v]`: the monitor daemon. Runs in
// the foreground until SIGTERM/SIGINT (`strata up` daemonizes it).
// --mkfs creates mon_data with the epoch-1 map (fsid from the config, or a
// new one it prints) and the keyring's keys as the auth database.
#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cluster/cluster_map.h"
#include "mon/daemon_config.h"
#include "mon/map_store.h"
#include "mon/monitor.h"
#include "msg/keyring.h"
#include "placement/placer.h"

namespace strata::cli {

namespace {

const char *kMonUsage =
    "usage: strata mon [--conf FILE] [--mkfs] [--set key=value]...\n"
    "  Runs the monitor (mon_addr, mon_data from the config; keys from `keyring`).\n"
    "  --mkfs   create mon_data with an empty cluster map and exit\n";

}  // namespace

int cmd_mon(std::vector<std::string> args) {
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(kMonUsage, stdout);
      return 0;
    }
  auto ctx = make_context(args);
  if (!ctx) return 1;
  ctx->entity = "mon";
  bool mkfs = false;
  for (const std::string &a : args) {
    if (a == "--mkfs")
      mkfs = true;
    else {
      std::fprintf(stderr, "strata mon: unknown option '%s'\n%s", a.c_str(), kMonUsage);
      return 2;
    }
  }
  const Config &cfg = ctx->config;
  if (Status s = mon::validate_cluster_config(cfg, "mon"); !s.ok()) return report(s);
  if (auto lvl = cfg.get("mon", "log_level")) ctx->log.set_level(Logger::parse_level(*lvl));
  std::string data = mon::config_str(cfg, "mon", "mon_data");
  if (data.empty()) return report(Status::Error(EINVAL, "mon_data is not set (e.g. in [mon])"));
  std::string keyring_path = mon::config_str(cfg, "mon", "keyring");
  if (keyring_path.empty())
    return report(Status::Error(EINVAL, "keyring is not set (the monitor's holds every key)"));
  auto keyring = msg::Keyring::load_file(keyring_path);
  if (!keyring.ok()) return report(keyring.status());
  std::string fsid = mon::config_str(cfg, "mon", "fsid");
  auto history = mon::config_int(cfg, "mon", "mon_map_history");
  if (!history.ok()) return report(history.status());
  Env env;  // the monitor's clock

  if (mkfs) {
    if (!keyring->secret("mon"))
      return report(Status::Error(EINVAL, "keyring " + keyring_path + " has no [mon] key"));
    if (!keyring->secret("client.admin"))
      std::fprintf(stderr,
                   "strata mon: warning: keyring has no client.admin key; nobody will "
                   "be able to run mutating commands\n");
    bool generated = fsid.empty();
    if (generated) fsid = mon::Monitor::new_fsid();
    std::string plugin = mon::config_str(cfg, "mon", "mon_placement");
    if (auto p = ctx->plugins->find(STRATA_KIND_PLACEMENT, plugin); !p.ok())
      return report(p.status());
    auto store = mon::open_rocks_map_store(data, {.create = true, .history = uint64_t(*history)});
    if (!store.ok()) return report(store.status());
    if (Status s =
            mon::Monitor::mkfs(**store, fsid, keyring->entries(), plugin, env.clock().wall_ms());
        !s.ok())
      return report(s.Context("mkfs " + data));
    std::printf("created monitor store %s (fsid %s, %zu keys, placement %s)\n", data.c_str(),
                fsid.c_str(), keyring->entries().size(), plugin.c_str());
    if (generated)
      std::printf("no fsid was configured: add `fsid = %s` to [global]\n", fsid.c_str());
    return 0;
  }

  // Signals go to sigwait below, never to the messenger's threads: block
  // them before any thread starts.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::FILE *log_file = nullptr;
  std::string log_path = mon::config_str(cfg, "mon", "log_file");
  if (!log_path.empty()) {
    log_file = std::fopen(log_path.c_str(), "a");
    if (!log_file) return report(Status::Error(errno, "opening log file " + log_path));
    std::setvbuf(log_file, nullptr, _IOLBF, 0);
  }
  Logger log(ctx->log.level(), log_file ? log_file : stderr);

  auto opts = mon::monitor_options(cfg);
  if (!opts.ok()) return report(opts.status());
  auto store = mon::open_rocks_map_store(data, {.create = false, .history = uint64_t(*history)});
  if (!store.ok()) return report(store.status());
  auto last = (*store)->full_map((*store)->last_epoch());
  if (!last.ok()) return report(last.status());
  auto map = cluster::decode_map(*last);
  if (!map.ok()) return report(map.status().Context(data));
  if (!fsid.empty() && fsid != map->fsid)
    return report(Status::Error(
        EINVAL, "config fsid " + fsid + " but " + data + " holds cluster " + map->fsid));
  auto plugin = ctx->plugins->find(STRATA_KIND_PLACEMENT, map->placement_plugin);
  if (!plugin.ok()) return report(plugin.status());
  auto monitor = mon::Monitor::open(std::move(*opts), std::move(*store), *plugin, log, env);
  if (!monitor.ok()) return report(monitor.status());
  auto addr = (*monitor)->start();
  if (!addr.ok()) return report(addr.status());

  int sig = 0;
  sigwait(&sigs, &sig);
  log.info("mon", std::string("stopping on signal ") + strsignal(sig));
  (*monitor)->stop();
  log.info("mon", "stopped");
  if (log_file) std::fclose(log_file);
  return 0;
}

}  // namespace strata::cli
