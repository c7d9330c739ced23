// `strata mds --id NAME [--conf FILE] [--set k=v]`: a metadata server
// daemon (core/mds/mds_daemon.h), in the foreground until SIGTERM/SIGINT.
// It is a standby until the fs map gives it a filesystem; fenced by a
// newer incarnation it exits at once with status 75.
#include <pthread.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/config_check.h"
#include "cluster/options.h"
#include "common/config_lookup.h"
#include "mds/mds_daemon.h"

namespace strata::cli {

namespace {

const char *kMdsUsage =
    "usage: strata mds --id NAME [--conf FILE] [--set key=value]...\n"
    "  Runs metadata server mds.NAME: beacons to the monitor at mon_addr, takes over the\n"
    "  filesystem the fs map gives it, serves filesystem clients at mds_addr.\n"
    "  Keys ([mds]/[mds.NAME]): mds_addr, mds_fs (standby-for), mds_cache_memory_limit,\n"
    "  mds_lease_ms, mds_delegate_inos, mds_beacon_interval_ms, mds_journal_segment_bytes,\n"
    "  mds_dir_split_entries, mds_apply_max_delay_ms, mds_purge_busy_rate,\n"
    "  mds_inline_data_max, fs_max_file_size.\n";

}  // namespace

int cmd_mds(std::vector<std::string> args) {
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(kMdsUsage, stdout);
      return 0;
    }
  // The cluster client reads the same file and overrides.
  std::string conf_path;
  std::vector<std::string> overrides;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--conf" || args[i] == "--config" || args[i] == "-c") conf_path = args[i + 1];
    if (args[i] == "--set") overrides.push_back(args[i + 1]);
  }
  auto ctx = make_context(args);
  if (!ctx) return 1;
  std::string name;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--id" && i + 1 < args.size()) {
      name = args[++i];
    } else if (a.rfind("--id=", 0) == 0) {
      name = a.substr(5);
    } else {
      std::fprintf(stderr, "strata mds: unknown option '%s'\n%s", a.c_str(), kMdsUsage);
      return 2;
    }
  }
  if (name.empty() || name.find_first_of(". /") != std::string::npos) {
    std::fprintf(stderr, "strata mds: --id NAME is required (no '.', '/' or spaces)\n%s",
                 kMdsUsage);
    return 2;
  }
  ctx->entity = "mds." + name;
  {
    std::vector<const strata_option_spec *> specs;
    for (const auto *list :
         {&cluster::global_options(), &cluster::mds_options(), &cluster::client_options()})
      for (const strata_option_spec &s : *list) specs.push_back(&s);
    if (Status s = validate_config(ctx->config, ctx->entity, specs); !s.ok()) return report(s);
  }
  if (auto lvl = ctx->config.get(ctx->entity, "log_level"))
    ctx->log.set_level(Logger::parse_level(*lvl));
  auto cfg = mds::load_mds_config(ctx->config, name);
  if (!cfg.ok()) return report(cfg.status());
  cfg->conf_path = conf_path;
  cfg->overrides = overrides;

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::FILE *log_file = nullptr;
  std::string log_path = ctx->config.get(ctx->entity, "log_file").value_or("");
  if (!log_path.empty()) {
    log_file = std::fopen(log_path.c_str(), "a");
    if (!log_file) return report(Status::Error(errno, "opening log file " + log_path));
    std::setvbuf(log_file, nullptr, _IOLBF, 0);
  }
  Logger log(ctx->log.level(), log_file ? log_file : stderr);
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    log.info("mds", std::string("stopping on signal ") + strsignal(sig));
    stop = true;
  });
  waiter.detach();
  int rc = 0;
  {
    mds::MdsDaemon daemon(*cfg, log);
    if (Status s = daemon.start(); !s.ok()) {
      log.error("mds", s.ToString());
      daemon.stop();
      rc = report(s);
    } else {
      rc = daemon.run(stop);
      // A fenced MDS is a zombie: nothing of it may reach the cluster any more.
      if (rc == mds::kFencedExit) std::_Exit(rc);
      if (Status s = daemon.stop(); !s.ok()) rc = report(s);
    }
  }
  log.info("mds", "mds." + name + " stopped");
  if (log_file) std::fclose(log_file);
  return rc;
}

}  // namespace strata::cli
