// `strata up --dir DIR ...`: a whole cluster on this machine in one command
// (monitor + N OSDs on 127.0.0.1, each OSD on its own loop-mounted XFS or
// btrfs image, or a plain directory for kv), a pool "data", and a wait
// until every PG is active+clean. Run again on a stopped DIR, it starts the
// same cluster again. `strata down --dir DIR [--purge]` stops it and
// releases the mounts.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "cli/cli_context.h"
#include "cli/cmd_up_support.h"
#include "cli/command_registry.h"
#include "cli/commands.h"
#include "cluster/options.h"
#include "common/config.h"
#include "common/json.h"
#include "mon/daemon_config.h"
#include "mon/mon_client.h"
#include "mon/monitor.h"
#include "msg/keyring.h"
#include "store/store_meta.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using up::Layout;

const char *kUpUsage =
    "usage: strata up --dir DIR [--osds 3] [--backend xfs|btrfs|kv] [--journal file|tmpfs]\n"
    "                 [--size-gb 4 | --size-mb N] [--pg-num 32] [--mds 1] [--timeout 180]\n"
    "                 [--set key=value]...\n"
    "  Makes and starts a local cluster in DIR: a monitor, N OSDs (each on a loop-mounted\n"
    "  XFS/btrfs image of --size-gb, or a directory for kv), a keyring, DIR/strata.conf and the\n"
    "  pools 'data' and 'rbd' (block images); waits until every PG is active+clean. --set\n"
    "  lines go into the config.\n"
    "  With the MDS daemon built in, also --mds N metadata servers (mds.a, mds.b, ...) and a\n"
    "  filesystem 'default', and waits until one MDS is active for it (--mds 0: none).\n"
    "  On a DIR made before (and stopped with `strata down`), starts that cluster again.\n"
    "  --conf FILE (or --config FILE) names the cluster by its DIR/strata.conf instead of --dir.\n";

const char *kDownUsage =
    "usage: strata down --dir DIR [--purge] [--timeout 10]\n"
    "  Stops the MDS daemons, the OSDs and the monitor of DIR (SIGTERM, SIGKILL after --timeout "
    "seconds),\n"
    "  unmounts the OSD images and detaches their loop devices. --purge also removes DIR.\n"
    "  --conf FILE (or --config FILE) names the cluster by its DIR/strata.conf instead of --dir.\n";

struct UpArgs {
  std::string dir;
  int osds = 3;
  std::string backend = "xfs";
  std::string journal = "file";
  uint64_t size_gb = 4;
  uint64_t size_mb = 0;  // overrides size_gb when set
  uint32_t pg_num = 32;
  int timeout_s = 180;
  int mds = 1;  // metadata servers mds.a, mds.b, ... (when `strata mds` exists)
  std::vector<std::pair<std::string, std::string>> sets;
};

int usage_error(const std::string &msg, const char *usage) {
  std::fprintf(stderr, "strata %s: %s\n%s", usage == kUpUsage ? "up" : "down", msg.c_str(), usage);
  return 2;
}

// `--conf DIR/strata.conf`: the cluster directory named through the config
// `strata up` wrote there, so that the command every other command takes
// works here too. "" (after printing) when FILE is not such a config.
std::string dir_of_config(const std::string &file) {
  fs::path p(file);
  if (p.filename() != "strata.conf") return "";
  return p.parent_path().empty() ? "." : p.parent_path().string();
}

// The section a --set key belongs in: the list that declares it ([mds]
// for the MDS's, e.g. mds_cache_memory_limit), else [osd] (plugin options
// are the OSDs' business).
std::string section_for(const std::string &key) {
  auto in = [&](const std::vector<strata_option_spec> &specs) {
    return std::any_of(specs.begin(), specs.end(),
                       [&](const strata_option_spec &s) { return key == s.name; });
  };
  if (in(cluster::global_options()) || key == "log_level" || key == "plugin_path") return "global";
  if (in(cluster::mon_options())) return "mon";
  if (in(cluster::client_options())) return "client";
  if (in(cluster::mds_options())) return "mds";
  return "osd";
}

void print(const std::string &s) {
  std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
}

// The OSD ids a cluster directory's config names ([osd.N] sections).
std::vector<int> osd_ids(const Config &cfg) {
  std::set<int> ids;
  for (const auto &e : cfg.entries())
    if (e.section.rfind("osd.", 0) == 0) ids.insert(std::atoi(e.section.c_str() + 4));
  return {ids.begin(), ids.end()};
}

Status write_config(const Layout &L, const UpArgs &a, const std::string &fsid, uint16_t port) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> sections;
  sections["global"] = {
      {"fsid", fsid}, {"mon_addr", "127.0.0.1:" + std::to_string(port)}, {"keyring", L.keyring()}};
  sections["mon"] = {{"mon_data", L.mon_data()}};
  sections["osd"] = {{"backend", a.backend}, {"journal", a.journal}};
  if (a.journal == "file") sections["osd"].push_back({"journal_size", "256M"});
  for (auto &[k, v] : a.sets) {
    auto &sec = sections[section_for(k)];
    auto it = std::find_if(sec.begin(), sec.end(), [&](auto &kv) { return kv.first == k; });
    if (it != sec.end())
      it->second = v;
    else
      sec.push_back({k, v});
  }
  std::ofstream out(L.conf());
  out << "# Made by `strata up`. Every cluster command reads it with --conf " << L.conf()
      << "\n# (or STRATA_CONF=" << L.conf() << ").\n";
  for (const char *name : {"global", "mon", "osd", "mds", "client"}) {
    if (!sections.count(name)) continue;
    out << "\n[" << name << "]\n";
    for (auto &[k, v] : sections[name]) out << k << " = " << v << "\n";
  }
  for (int id = 0; id < a.osds; ++id)
    out << "\n[osd." << id << "]\nstore_dir = " << L.osd_store(id) << "\n";
  out.close();
  if (!out) return Status::Error(EIO, "writing " + L.conf());
  return Status::OK();
}

Result<std::unique_ptr<mon::MonClient>> connect_admin(const Config &cfg,
                                                      std::chrono::seconds timeout) {
  auto opts = mon::mon_client_options(cfg, "client.admin");
  if (!opts.ok()) return opts.status();
  opts->connect_timeout = 1s;
  static Logger quiet(STRATA_LOG_ERROR);
  auto end = std::chrono::steady_clock::now() + timeout;
  Status last;
  while (std::chrono::steady_clock::now() < end) {
    auto mc = std::make_unique<mon::MonClient>(*opts, quiet);
    last = mc->start();
    if (last.ok()) return mc;
    std::this_thread::sleep_for(200ms);
  }
  return last.Context("waiting for the monitor");
}

// Human summary of a status JSON: "24 active+clean, 8 peering".
// Whether this binary has the MDS daemon (`strata mds`).
bool have_mds_command() {
  for (const Command &c : command_registry())
    if (std::string(c.path) == "mds" && c.run) return true;
  return false;
}

// "a", "b", ..., "z": the names `strata up` gives its MDS daemons.
std::vector<std::string> mds_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n && i < 26; ++i) names.push_back(std::string(1, char('a' + i)));
  return names;
}

// The MDS names a cluster directory's keyring has keys for.
std::vector<std::string> keyring_mds(const msg::Keyring &k) {
  std::vector<std::string> names;
  for (const auto &[entity, secret] : k.entries())
    if (entity.rfind("mds.", 0) == 0) names.push_back(entity.substr(4));
  return names;
}

std::string pg_states(const json::Value &status) {
  std::string s;
  for (const auto &[state, n] : status["pgs"]["by_state"].as_object())
    s += (s.empty() ? "" : ", ") + std::to_string(n.as_int()) + " " + state;
  return s.empty() ? "no PGs" : s;
}

// The MDS daemons and the filesystem "default" (docs/FILESYSTEM.md), when
// this binary has `strata mds`: keys for the MDS names (`auth add` on a
// cluster made before they existed), the daemons, the filesystem, and a
// wait until an MDS is active for it. *have_fs: a filesystem exists.
Status start_mds(const Layout &L, const UpArgs &a, const std::string &exe, mon::MonClient &mc,
                 bool fresh, std::chrono::steady_clock::time_point deadline, bool *have_fs) {
  auto m = mc.map();
  *have_fs = m && !m->filesystems.empty();
  if (!have_mds_command()) return Status::OK();
  auto k = msg::Keyring::load_file(L.keyring());
  if (!k.ok()) return k.status();
  std::vector<std::string> names = keyring_mds(*k);
  if (!fresh && names.empty()) {
    // A cluster made before MDS daemons: their keys go to the monitor and
    // the keyring now.
    for (const std::string &name : mds_names(a.mds)) {
      auto r = mc.command("auth add", {{"entity", "mds." + name}});
      if (!r.ok()) return r.status();
      if (r->rc != 0) return Status::Error(r->rc, "auth add mds." + name + ": " + r->message);
      auto added = msg::Keyring::parse(r->message, "auth add mds." + name);
      if (!added.ok()) return added.status();
      for (const auto &[entity, secret] : added->entries()) k->set(entity, secret);
      names.push_back(name);
    }
    if (Status s = k->write_file(L.keyring()); !s.ok()) return s;
  }
  if (names.empty()) return Status::OK();
  for (const std::string &name : names) {
    std::string d = "mds." + name;
    if (up::live_daemon(L.pid(d), L.conf())) continue;
    auto pid = up::spawn_daemon({exe, "mds", "--id", name, "--conf", L.conf()}, L.log(d), L.pid(d));
    if (!pid.ok()) return pid.status().Context(d);
    print("== " + d + " started (pid " + std::to_string(*pid) + ", log " + L.log(d) + ")\n");
  }
  m = mc.map();
  if (m && !m->fs_by_name("default")) {
    // Its pools like "data": as many replicas as there are OSDs, up to 3.
    uint32_t size = uint32_t(std::min<size_t>(3, m->osds.size()));
    uint32_t min_size = std::min<uint32_t>(2, size);
    auto pool = [&](const std::string &name, uint32_t pgs) -> Status {
      if (m->pool_by_name(name)) return Status::OK();
      auto r = mc.command("pool create", {{"name", name},
                                          {"size", std::to_string(size)},
                                          {"min_size", std::to_string(min_size)},
                                          {"pg_num", std::to_string(pgs)}});
      if (!r.ok()) return r.status();
      if (r->rc != 0) return Status::Error(r->rc, "pool create " + name + ": " + r->message);
      return Status::OK();
    };
    if (Status s = pool("default.meta", std::max<uint32_t>(1, std::min<uint32_t>(a.pg_num, 8)));
        !s.ok())
      return s;
    if (Status s = pool("default.data", a.pg_num); !s.ok()) return s;
    auto r = mc.command(
        "fs new",
        {{"name", "default"}, {"metadata_pool", "default.meta"}, {"data_pool", "default.data"}});
    if (!r.ok()) return r.status();
    if (r->rc != 0) return Status::Error(r->rc, "fs new default: " + r->message);
    print("== " + r->message + "\n");
  }
  *have_fs = true;
  while (true) {
    m = mc.map();
    const cluster::FsInfo *f = m ? m->fs_by_name("default") : nullptr;
    if (!f) break;  // removed meanwhile: nothing to wait for
    if (const cluster::MdsInfo *act = m->active_mds(f->id)) {
      print("== mds." + act->name + " is active for fs 'default'\n");
      break;
    }
    if (std::chrono::steady_clock::now() > deadline)
      return Status::Error(ETIMEDOUT, "no MDS became active for fs 'default' within " +
                                          std::to_string(a.timeout_s) + " s (see " + L.dir +
                                          "/mds.X.log)");
    std::this_thread::sleep_for(200ms);
  }
  return Status::OK();
}

int do_up(UpArgs a) {
  Layout L{fs::absolute(a.dir).lexically_normal().string()};
  while (L.dir.size() > 1 && L.dir.back() == '/') L.dir.pop_back();
  std::string exe = up::self_exe();
  bool fresh = !fs::exists(L.conf());
  bool loop = false;
  std::vector<int> ids;

  if (fresh) {
    if (a.backend == "xfs" || a.backend == "btrfs") {
      loop = true;
      if (geteuid() != 0)
        return report(Status::Error(EPERM, "--backend " + a.backend +
                                               " loop-mounts an image and needs root; use "
                                               "--backend kv to run without"));
    }
    std::error_code ec;
    fs::create_directories(L.dir, ec);
    if (ec) return report(Status::Error(ec.value(), "creating " + L.dir + ": " + ec.message()));
    msg::Keyring k;
    k.set("mon", msg::Keyring::generate_secret());
    k.set("client.admin", msg::Keyring::generate_secret());
    for (int id = 0; id < a.osds; ++id)
      k.set("osd." + std::to_string(id), msg::Keyring::generate_secret());
    for (const std::string &name : mds_names(a.mds))
      k.set("mds." + name, msg::Keyring::generate_secret());
    if (Status s = k.write_file(L.keyring()); !s.ok()) return report(s);
    // Any free port: two clusters made at once (parallel tests) must not
    // both pick the conventional 6789 and race for it.
    uint16_t port = up::free_port(0);
    if (Status s = write_config(L, a, mon::Monitor::new_fsid(), port); !s.ok()) return report(s);
    print("== new cluster in " + L.dir + " (" + std::to_string(a.osds) + " OSDs, " + a.backend +
          " backend, " + a.journal + " journal)\n");
  } else {
    print("== starting the cluster in " + L.dir + " again\n");
  }
  auto cfg = Config::load_file(L.conf());
  if (!cfg.ok()) return report(cfg.status());
  ids = osd_ids(*cfg);
  std::string backend = cfg->get("osd.0", "backend").value_or(a.backend);
  loop = backend == "xfs" || backend == "btrfs";

  // Past this point something runs: say how to stop it when we give up.
  auto fail = [&](const Status &st) {
    report(st);
    std::fprintf(stderr, "strata: what did start keeps running; `strata down --dir %s` stops it\n",
                 L.dir.c_str());
    return 1;
  };

  // The monitor.
  // mkfs steps run when their result is missing, so an `up` that failed
  // half-way can simply be run again.
  if (!fs::exists(L.mon_data() + "/CURRENT")) {
    if (Status s = up::run({exe, "mon", "--conf", L.conf(), "--mkfs"}); !s.ok()) return fail(s);
  }
  if (!up::live_daemon(L.pid("mon"), L.conf())) {
    auto pid = up::spawn_daemon({exe, "mon", "--conf", L.conf()}, L.log("mon"), L.pid("mon"));
    if (!pid.ok()) return fail(pid.status());
    print("== monitor started (pid " + std::to_string(*pid) + ", log " + L.log("mon") + ")\n");
  }
  auto admin = connect_admin(*cfg, 20s);
  if (!admin.ok())
    return fail(admin.status().Context("the monitor did not come up (see " + L.log("mon") + ")"));
  mon::MonClient &mc = **admin;
  print("== monitor at " + mon::config_str(*cfg, "client.admin", "mon_addr") + "\n");

  // The OSDs.
  for (int id : ids) {
    std::string name = "osd." + std::to_string(id);
    if (up::live_daemon(L.pid(name), L.conf())) continue;
    bool made = fs::exists(L.made(id));
    if (loop) {
      Status s = !made ? up::mount_image(backend, L.osd_image(id), L.osd_mount(id),
                                         a.size_mb ? a.size_mb << 20 : a.size_gb << 30)
                       : up::remount_image(L.osd_image(id), L.osd_mount(id));
      if (!s.ok()) return fail(s.Context(name));
    } else {
      std::error_code ec;
      if (!made) fs::remove_all(L.osd_store(id), ec);  // what a failed mkfs left
      fs::create_directories(L.osd_mount(id), ec);
    }
    if (!made) {
      if (Status s =
              up::run({exe, "osd", "--id", std::to_string(id), "--conf", L.conf(), "--mkfs"});
          !s.ok())
        return fail(s.Context(name + " mkfs"));
      std::ofstream(L.made(id)) << "mkfs done\n";
    }
    auto pid = up::spawn_daemon({exe, "osd", "--id", std::to_string(id), "--conf", L.conf()},
                                L.log(name), L.pid(name));
    if (!pid.ok()) return fail(pid.status().Context(name));
    print("== " + name + " started (pid " + std::to_string(*pid) + ", store " + L.osd_store(id) +
          (loop ? " on a loop-mounted " + backend + " image" : "") + ")\n");
  }

  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(a.timeout_s);
  auto all_up = [&] {
    auto m = mc.map();
    if (!m) return false;
    for (int id : ids) {
      const cluster::OsdInfo *o = m->osd(id);
      if (!o || !o->up) return false;
    }
    return true;
  };
  while (!all_up()) {
    if (std::chrono::steady_clock::now() > deadline)
      return fail(Status::Error(ETIMEDOUT, "not every OSD booted within " +
                                               std::to_string(a.timeout_s) + " s (see " + L.dir +
                                               "/osd.N.log)"));
    std::this_thread::sleep_for(200ms);
  }
  print("== " + std::to_string(ids.size()) + " OSDs up\n");

  auto m = mc.map();
  // "data" for objects, "rbd" for block images (`strata image create rbd/NAME`).
  for (const char *pool : {"data", "rbd"}) {
    if (m->pool_by_name(pool)) continue;
    uint32_t size = uint32_t(std::min<size_t>(3, ids.size()));
    uint32_t min_size = std::min<uint32_t>(2, size);
    auto r = mc.command("pool create", {{"name", pool},
                                        {"size", std::to_string(size)},
                                        {"min_size", std::to_string(min_size)},
                                        {"pg_num", std::to_string(a.pg_num)}});
    if (!r.ok()) return fail(r.status());
    if (r->rc != 0) return fail(Status::Error(r->rc, r->message));
    print("== " + r->message + "\n");
  }

  // Every PG active+clean, as the OSDs report it to the monitor.
  std::string last;
  while (true) {
    auto r = mc.command("status", {}, 5s);
    if (r.ok() && r->rc == 0) {
      auto j = json::parse(r->json);
      if (j.ok()) {
        std::string states = pg_states(*j);
        if (states != last) print("   PGs: " + states + "\n");
        last = states;
        int64_t total = (*j)["pgs"]["total"].as_int();
        if (total > 0 && (*j)["pgs"]["by_state"]["active+clean"].as_int() == total) break;
      }
    }
    if (std::chrono::steady_clock::now() > deadline)
      return fail(Status::Error(ETIMEDOUT, "PGs not all active+clean within " +
                                               std::to_string(a.timeout_s) + " s; `strata --conf " +
                                               L.conf() + " status` shows where they are"));
    std::this_thread::sleep_for(500ms);
  }

  bool have_fs = false;
  if (Status s = start_mds(L, a, exe, mc, fresh, deadline, &have_fs); !s.ok()) return fail(s);

  std::string conf = L.conf(), bin = exe + " ";
  print(
      "\nThe cluster is up: every PG is active+clean.\n"
      "What you can do now (or `export STRATA_CONF=" +
      conf +
      "` and drop --conf):\n"
      "  " +
      bin + "status --conf " + conf +
      "\n"
      "  " +
      bin + "osd tree --conf " + conf +
      "\n"
      "  " +
      bin + "pool ls --conf " + conf +
      "\n"
      "  " +
      bin + "object put hello /etc/hostname --pool data --conf " + conf +
      "\n"
      "  " +
      bin + "object get hello - --pool data --conf " + conf +
      "\n"
      "  " +
      bin + "object ls --pool data --conf " + conf +
      "\n"
      "  " +
      bin + "bench objects write --pool data --size 4K --concurrency 16 --seconds 10 --conf " +
      conf +
      "\n"
      "  " +
      (have_fs ? "  mount: " + bin + "mount /mnt/strata --conf " + conf + "\n" : std::string()) +
      "  block image: " + bin + "image create rbd/disk --size 1G --conf " + conf + "\n" +
      "    over NBD: " + bin + "nbd serve rbd/disk --socket /tmp/disk.sock --conf " + conf +
      "   (nbd+unix:///rbd/disk?socket=/tmp/disk.sock)\n" +
      "    as a file: " + bin + "image map rbd/disk --at /mnt/disk --conf " + conf +
      "   (losetup --direct-io=on -f --show /mnt/disk/disk)\n" +
      "  " + bin + "down --dir " + L.dir +
      "      # stop it (add --purge to delete it)\n"
      "Logs: " +
      L.log("mon") + ", " + L.dir + "/osd.N.log\n");
  return 0;
}

}  // namespace

int cmd_up(std::vector<std::string> args) {
  UpArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &f = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    auto number = [&](long lo, long hi) -> std::optional<long> {
      auto v = value();
      if (!v) return std::nullopt;
      char *end = nullptr;
      long n = std::strtol(v->c_str(), &end, 10);
      if (*end || v->empty() || n < lo || n > hi) return std::nullopt;
      return n;
    };
    if (f == "--help" || f == "-h") {
      std::fputs(kUpUsage, stdout);
      return 0;
    } else if (f == "--dir") {
      auto v = value();
      if (!v) return usage_error("--dir needs a directory", kUpUsage);
      a.dir = *v;
    } else if (f == "--conf" || f == "--config") {
      auto v = value();
      std::string d = v ? dir_of_config(*v) : "";
      if (d.empty())
        return usage_error(f + " takes DIR/strata.conf (the cluster's config)", kUpUsage);
      a.dir = d;
    } else if (f == "--osds") {
      auto n = number(1, 64);
      if (!n) return usage_error("--osds needs a number from 1 to 64", kUpUsage);
      a.osds = int(*n);
    } else if (f == "--backend") {
      auto v = value();
      if (!v || (*v != "xfs" && *v != "btrfs" && *v != "kv"))
        return usage_error("--backend is xfs, btrfs or kv", kUpUsage);
      a.backend = *v;
    } else if (f == "--journal") {
      auto v = value();
      if (!v || (*v != "file" && *v != "tmpfs"))
        return usage_error("--journal is file or tmpfs", kUpUsage);
      a.journal = *v;
    } else if (f == "--size-gb") {
      auto n = number(1, 4096);
      if (!n) return usage_error("--size-gb needs a number from 1 to 4096", kUpUsage);
      a.size_gb = uint64_t(*n);
    } else if (f == "--size-mb") {
      // Small images for tests of full disks (XFS needs about 300 MiB).
      auto n = number(300, 4096 * 1024);
      if (!n) return usage_error("--size-mb needs a number from 300", kUpUsage);
      a.size_mb = uint64_t(*n);
    } else if (f == "--pg-num") {
      auto n = number(1, 65536);
      if (!n) return usage_error("--pg-num needs a number from 1 to 65536", kUpUsage);
      a.pg_num = uint32_t(*n);
    } else if (f == "--mds") {
      auto n = number(0, 26);
      if (!n) return usage_error("--mds needs a number from 0 to 26", kUpUsage);
      a.mds = int(*n);
    } else if (f == "--timeout") {
      auto n = number(1, 86400);
      if (!n) return usage_error("--timeout needs seconds", kUpUsage);
      a.timeout_s = int(*n);
    } else if (f == "--set") {
      auto v = value();
      size_t eq = v ? v->find('=') : std::string::npos;
      if (!v || eq == std::string::npos || eq == 0)
        return usage_error("--set needs key=value", kUpUsage);
      a.sets.push_back({v->substr(0, eq), v->substr(eq + 1)});
    } else {
      return usage_error("unknown option '" + f + "'", kUpUsage);
    }
  }
  if (a.dir.empty()) return usage_error("--dir is required", kUpUsage);
  return do_up(std::move(a));
}

int cmd_down(std::vector<std::string> args) {
  std::string dir;
  bool purge = false;
  int timeout_s = 10;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kDownUsage, stdout);
      return 0;
    } else if (args[i] == "--dir" && i + 1 < args.size()) {
      dir = args[++i];
    } else if ((args[i] == "--conf" || args[i] == "--config") && i + 1 < args.size()) {
      dir = dir_of_config(args[++i]);
      if (dir.empty())
        return usage_error(args[i - 1] + " takes DIR/strata.conf (the cluster's config)",
                           kDownUsage);
    } else if (args[i] == "--purge") {
      purge = true;
    } else if (args[i] == "--timeout" && i + 1 < args.size()) {
      timeout_s = std::max(1, std::atoi(args[++i].c_str()));
    } else {
      return usage_error("unknown option (or one missing its value) '" + args[i] + "'", kDownUsage);
    }
  }
  if (dir.empty()) return usage_error("--dir is required", kDownUsage);
  Layout L{fs::absolute(dir).lexically_normal().string()};
  while (L.dir.size() > 1 && L.dir.back() == '/') L.dir.pop_back();
  if (!fs::exists(L.dir)) {
    print("nothing to stop: " + L.dir + " does not exist\n");
    return 0;
  }
  // What the directory holds: osd.N.pid, osd.N.img, osd.N/.
  std::set<int> ids;
  static const std::regex osd_re(R"(osd\.(\d+)(\.pid|\.img)?)");
  for (const auto &e : fs::directory_iterator(L.dir)) {
    std::smatch mt;
    std::string name = e.path().filename().string();
    if (std::regex_match(name, mt, osd_re)) ids.insert(std::stoi(mt[1]));
  }
  // MDS daemons first (they write through the OSDs), then the OSDs (in
  // parallel), then the monitor, so OSDs do not report each other down to
  // a monitor that is about to go anyway.
  auto grace = std::chrono::milliseconds(timeout_s * 1000);
  static const std::regex mds_re(R"(mds\.([A-Za-z0-9_-]+)\.pid)");
  for (const auto &e : fs::directory_iterator(L.dir)) {
    std::smatch mt;
    std::string name = e.path().filename().string();
    if (!std::regex_match(name, mt, mds_re)) continue;
    std::string what, d = "mds." + mt[1].str();
    if (up::stop_daemon(L.pid(d), L.conf(), grace, &what)) print(d + ": " + what + "\n");
  }
  std::vector<std::thread> stoppers;
  std::vector<std::string> results(ids.size());
  size_t k = 0;
  for (int id : ids) {
    stoppers.emplace_back([&, id, k] {
      std::string what;
      std::string name = "osd." + std::to_string(id);
      if (up::stop_daemon(L.pid(name), L.conf(), grace, &what)) results[k] = name + ": " + what;
    });
    ++k;
  }
  for (auto &t : stoppers) t.join();
  for (const std::string &r : results)
    if (!r.empty()) print(r + "\n");
  std::string what;
  if (up::stop_daemon(L.pid("mon"), L.conf(), grace, &what)) print("mon: " + what + "\n");
  // Journals that live outside DIR (tmpfs: /dev/shm) go with --purge too;
  // their paths are in the stores' identity files, read while mounted.
  std::vector<std::string> outside;
  if (purge)
    for (int id : ids) {
      auto meta = store::StoreMeta::load(L.osd_store(id));
      const std::string at = meta.ok() ? meta->journal_location(L.osd_store(id)) : "";
      if (!at.empty() && at.rfind(L.dir + "/", 0) != 0 && fs::is_regular_file(at))
        outside.push_back(at);
    }
  int rc = 0;
  for (int id : ids) {
    if (!fs::exists(L.osd_image(id)) && !up::is_mountpoint(L.osd_mount(id))) continue;
    Status s = up::unmount_image(L.osd_image(id), L.osd_mount(id));
    if (!s.ok()) {
      report(s);
      rc = 1;
    } else if (fs::exists(L.osd_image(id))) {
      print("osd." + std::to_string(id) + ": unmounted " + L.osd_mount(id) + "\n");
    }
  }
  if (purge && rc == 0) {
    std::error_code ec;
    fs::remove_all(L.dir, ec);
    if (ec) return report(Status::Error(ec.value(), "removing " + L.dir + ": " + ec.message()));
    print("removed " + L.dir + "\n");
    for (const std::string &j : outside)
      if (fs::remove(j, ec)) print("removed journal " + j + "\n");
  }
  print("cluster in " + L.dir + " is down\n");
  return rc;
}

}  // namespace strata::cli
