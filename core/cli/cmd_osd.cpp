// `strata osd --id N --conf F [--mkfs] [--set k=v]`: one OSD daemon, in the
// foreground until SIGTERM/SIGINT (`strata up` daemonizes it).
// --mkfs makes its object store (backend, journal and their options from
// [osd]/[osd.N]) plus the identity file naming the OSD id and cluster fsid,
// and exits; an OSD refuses to run on a store made for another id or
// cluster.
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/store_options.h"
#include "cluster/options.h"
#include "osd/osd_config.h"
#include "osd/osd_daemon.h"
#include "osd/osd_failpoints.h"
#include "osd/osd_identity.h"
#include "store/store_meta.h"

namespace strata::cli {

namespace {

const char *kOsdUsage =
    "usage: strata osd --id N [--conf FILE] [--mkfs] [--set key=value]...\n"
    "  Runs OSD N: its store (store_dir, backend, journal from [osd]/[osd.N]), the\n"
    "  monitor at mon_addr, its key from `keyring`.\n"
    "  --mkfs   make the OSD's object store and identity file, then exit\n";

// Every key that may apply to osd.N: cluster keys, core store keys, and the
// options of the backend and journal plugins it uses.
Status validate_osd_config(const CliContext &ctx, const std::string &backend,
                           const std::string &journal) {
  std::vector<const strata_option_spec *> specs;
  for (const auto *list : {&cluster::global_options(), &cluster::osd_options(), &core_store_options()})
    for (const strata_option_spec &s : *list) specs.push_back(&s);
  auto add_plugin = [&](uint32_t kind, const std::string &name) -> Status {
    auto p = ctx.plugins->find(kind, name);
    if (!p.ok()) return p.status();
    const strata_plugin_descriptor &d = p->descriptor();
    for (size_t i = 0; i < d.n_options; ++i)
      if (d.options[i].name) specs.push_back(&d.options[i]);
    return Status::OK();
  };
  if (Status s = add_plugin(STRATA_KIND_OBJECTSTORE, backend); !s.ok()) return s;
  if (journal != "none")
    if (Status s = add_plugin(STRATA_KIND_JOURNAL, journal); !s.ok()) return s;
  return validate_config(ctx.config, ctx.entity, specs);
}

// The store helpers validate against store options only: hand them the
// config without the cluster keys (already validated above).
struct StoreView {
  explicit StoreView(CliContext &ctx) : ctx_(ctx) {
    auto cluster_keys = osd::cluster_keys_for_osd();
    std::set<std::string> skip(cluster_keys.begin(), cluster_keys.end());
    for (const Config::Entry &e : ctx.config.entries())
      if (!skip.count(e.key)) view.config.set(e.section, e.key, e.value);
    view.entity = ctx.entity;
    view.log.set_level(ctx.log.level());
    view.plugins = std::move(ctx.plugins);
  }
  ~StoreView() { ctx_.plugins = std::move(view.plugins); }
  CliContext view;

 private:
  CliContext &ctx_;
};

int mkfs(CliContext &ctx, const osd::OsdConfig &cfg) {
  std::error_code ec;
  if (std::filesystem::exists(cfg.store_dir + "/" + osd::OsdIdentity::kFileName, ec))
    return report(Status::Error(EEXIST, "osd." + std::to_string(cfg.id) + ": " + cfg.store_dir +
                                            " already holds an OSD store"));
  store::MkfsParams params;
  {
    StoreView sv(ctx);
    auto p = mkfs_params_from_config(sv.view, cfg.store_dir);
    if (!p.ok()) return report(p.status());
    params = std::move(*p);
  }
  std::filesystem::create_directories(cfg.store_dir, ec);
  if (Status s = store::Store::mkfs(*ctx.plugins, params, ctx.log); !s.ok())
    return report(s.Context("osd." + std::to_string(cfg.id) + " mkfs"));
  osd::OsdIdentity ident;
  ident.osd_id = cfg.id;
  ident.cluster_fsid = cfg.fsid;
  if (Status s = ident.save(cfg.store_dir); !s.ok()) return report(s);
  std::printf("made the store of osd.%d in %s (backend %s, journal %s%s)\n", cfg.id,
              cfg.store_dir.c_str(), params.backend.c_str(), params.journal.c_str(),
              cfg.fsid.empty() ? ", any cluster" : (", cluster " + cfg.fsid).c_str());
  return 0;
}

}  // namespace

int cmd_osd(std::vector<std::string> args) {
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(kOsdUsage, stdout);
      return 0;
    }
  auto ctx = make_context(args);
  if (!ctx) return 1;
  bool do_mkfs = false;
  long id = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--mkfs") {
      do_mkfs = true;
    } else if (a == "--id" || a.rfind("--id=", 0) == 0) {
      std::string v = a == "--id" ? (i + 1 < args.size() ? args[++i] : "") : a.substr(5);
      char *end = nullptr;
      id = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || id < 0 || id > 1000000) {
        std::fprintf(stderr, "strata osd: bad --id '%s'\n%s", v.c_str(), kOsdUsage);
        return 2;
      }
    } else {
      std::fprintf(stderr, "strata osd: unknown option '%s'\n%s", a.c_str(), kOsdUsage);
      return 2;
    }
  }
  if (id < 0) {
    std::fprintf(stderr, "strata osd: --id is required\n%s", kOsdUsage);
    return 2;
  }
  ctx->entity = "osd." + std::to_string(id);
  if (auto lvl = ctx->config.get(ctx->entity, "log_level")) ctx->log.set_level(Logger::parse_level(*lvl));

  std::string dir = ctx->config.get(ctx->entity, "store_dir").value_or("");
  std::string backend, journal;
  if (do_mkfs || dir.empty()) {
    backend = ctx->config.get(ctx->entity, "backend").value_or("xfs");
    journal = ctx->config.get(ctx->entity, "journal").value_or("file");
  } else {
    // A running OSD uses what its store was made with.
    auto meta = store::StoreMeta::load(dir);
    if (!meta.ok()) return report(meta.status().Context("osd." + std::to_string(id)));
    backend = meta->backend;
    journal = meta->journal;
  }
  if (Status s = validate_osd_config(*ctx, backend, journal); !s.ok()) return report(s);
  auto cfg = osd::load_osd_config(ctx->config, static_cast<int32_t>(id));
  if (!cfg.ok()) return report(cfg.status());
  if (do_mkfs) return mkfs(*ctx, *cfg);

  store::StoreSettings settings;
  {
    StoreView sv(*ctx);
    auto s = settings_from_config(sv.view, cfg->store_dir);
    if (!s.ok()) return report(s.status());
    settings = *s;
  }

  // The daemon's clock and failpoints; tests arm these through the config.
  Env env;
  if (Status s = env.failpoints().arm_from(ctx->config.get(ctx->entity, "failpoints").value_or(""),
                                           osd::osd_failpoint_names());
      !s.ok())
    return report(s.Context(ctx->entity));

  // Signals go to sigwait below, never to the daemon's threads.
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
  env.failpoints().set_announce([&log](const std::string &line) { log.error("osd", line); });
  int rc = 0;
  {
    osd::OsdDaemon daemon(*cfg, settings, *ctx->plugins, log, env);
    if (Status s = daemon.start(); !s.ok()) {
      log.error("osd", s.ToString());
      daemon.stop();
      rc = report(s);
    } else {
      int sig = 0;
      sigwait(&sigs, &sig);
      log.info("osd", std::string("stopping on signal ") + strsignal(sig));
      if (Status s = daemon.stop(); !s.ok()) rc = report(s);
    }
  }
  if (log_file) std::fclose(log_file);
  return rc;
}

}  // namespace strata::cli
