// `strata mount MOUNTPOINT --fs NAME ...` and `strata umount MOUNTPOINT`:
// the filesystem through the `fuse` frontend plugin, run like `strata
// frontend run` (FrontendInstance on one cluster connection).
//
// mount goes to the background once the filesystem is mounted (so that
// shells and scripts continue with the mount in place): it forks before
// any thread exists, the child mounts, and the parent exits 0 when the
// child says the mount is up, or with the child's exit status when it
// failed (the child's errors reach the terminal). A state file names the
// serving process per mount point, so that umount can wait for it.
//
// umount detaches the mount (fusermount3 -u, or umount2 as root when
// fusermount3 is missing); the serving process sees its FUSE session end,
// writes out what is buffered, makes its changes safe at the MDS, and
// exits; umount waits for that.
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/background_frontend.h"
#include "cli/cmd_client_common.h"
#include "cli/commands.h"
#include "cli/frontend_support.h"
#include "client/client_api_table.h"

namespace strata::cli {

namespace {

const char *kMount = "mount";
const char *kUmount = "umount";

const char *kMountUsage =
    "usage: strata mount MOUNTPOINT [--fs NAME] [--root PATH] [--foreground]\n"
    "                    [--set key=value]... [common options]\n"
    "  Mounts filesystem NAME (`strata fs ls`) on the directory MOUNTPOINT through FUSE (the\n"
    "  `fuse` frontend plugin) and goes to the background once the mount is up; exits non-zero\n"
    "  with the reason when it cannot mount. `strata umount MOUNTPOINT` ends it.\n"
    "  --fs NAME          the filesystem (or --set fs=NAME; default: default)\n"
    "  --root PATH        mount this directory of the filesystem instead of its root\n"
    "  --foreground       stay in the foreground until SIGINT/SIGTERM or the unmount\n"
    "  --set key=value    an option of the fuse plugin (allow_other, default_permissions,\n"
    "                     writeback_cache, max_write, max_read, max_threads...: see below),\n"
    "                     or else a client config key (mon_addr, keyring, ...)\n"
    "  Needs /dev/fuse and fusermount3 (Debian: fuse3); allow_other needs user_allow_other in\n"
    "  /etc/fuse.conf unless run as root.\n"
    "  exit status: 0 mounted (and, with --foreground, unmounted cleanly); 1 could not mount\n"
    "  or did not stop cleanly; 2 usage\n";

const char *kUmountUsage =
    "usage: strata umount MOUNTPOINT [--timeout SECONDS]\n"
    "  Unmounts a `strata mount` (fusermount3 -u) and waits until its process has written out\n"
    "  buffered data, made its metadata changes safe and exited (at most --timeout, default\n"
    "  120 seconds).\n"
    "  exit status: 0 unmounted; 1 could not unmount, or the process did not exit in time;\n"
    "  2 usage\n";

void print_mount_usage(std::FILE *out) {
  std::fputs(kMountUsage, out);
  std::fputs(common_options_help(), out);
}

struct MountArgs {
  CommonOptions common;
  std::string mountpoint;
  std::string fs;
  std::string root;
  bool foreground = false;
};

// Runs the plugin until the filesystem is unmounted or a stop signal
// comes. `ready` (a pipe, -1 in the foreground) gets one byte once the
// mount is up.
int serve(const MountArgs &a, const StopSignals &signals, int ready) {
  auto plugin = find_frontend(a.common, "fuse");
  if (!plugin.ok()) return fail(kMount, plugin.status());
  auto sets = split_sets(*plugin, a.common.sets);
  if (!sets.ok()) return usage_error(kMount, sets.status().message(), "");
  host::PluginOptions given;
  for (auto &kv : sets->plugin)
    if (kv.first != "mountpoint" && !(kv.first == "fs" && !a.fs.empty()) &&
        !(kv.first == "root" && !a.root.empty()))
      given.push_back(kv);
  given.emplace_back("mountpoint", a.mountpoint);
  if (!a.fs.empty()) given.emplace_back("fs", a.fs);
  if (!a.root.empty()) given.emplace_back("root", a.root);
  // Without --fs: the filesystem `strata up` makes.
  bool fs_given = !a.fs.empty();
  for (auto &kv : given) fs_given |= kv.first == "fs" && !kv.second.empty();
  if (!fs_given) given.emplace_back("fs", "default");
  auto options = host::resolve_plugin_options(*plugin, given);
  if (!options.ok()) return usage_error(kMount, options.status().message(), "");
  bool has_fs = false;
  for (auto &kv : *options) has_fs |= kv.first == "fs" && !kv.second.empty();
  if (!has_fs) return usage_error(kMount, "--fs NAME is required (`strata fs ls`)", kMountUsage);

  CommonOptions client_options = a.common;
  client_options.sets = sets->client;
  auto session = Session::open(client_options);
  if (!session.ok()) return fail(kMount, session.status());
  strata_cluster_t cluster = (*session)->cluster();

  char level[16] = "info";
  strata_cluster_conf_get(cluster, "log_level", level, sizeof level);
  Logger log(std::max(0, Logger::parse_level(level)));
  const std::string component = "mount " + a.mountpoint;

  auto fe =
      host::FrontendInstance::start(*plugin, cluster, client::client_api_table(), *options, log);
  if (!fe.ok()) return fail(kMount, fe.status());

  std::string state = frontend_state_file("mount", a.mountpoint);
  write_frontend_state(state);
  auto line = (*fe)->status(STRATA_FRONTEND_STATUS_LINE);
  log.info(component, "mounted: " + (line.ok() ? *line : line.status().ToString()));
  // The parent exits now; nobody reads our terminal any more.
  report_ready(ready);

  int sig = wait_for_stop(signals, **fe, a.common.format, log);
  log.info(component, sig != 0 ? std::string("unmounting on SIG") + sigabbrev_np(sig)
                               : std::string("unmounted"));
  Status stopped = (*fe)->stop();
  ::unlink(state.c_str());
  if (!stopped.ok()) return fail(kMount, stopped);
  auto request = (*fe)->stop_request();
  if (sig == 0 && request && request->result != 0)
    return fail(kMount,
                Status::Error(request->result, "the filesystem failed: " + request->reason));
  return 0;
}

}  // namespace

int cmd_mount(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage_error(kMount, common.status().message(), kMountUsage);
  MountArgs a;
  a.common = *common;
  auto fs = list.take("--fs");
  if (!fs.ok()) return usage_error(kMount, fs.status().message(), kMountUsage);
  auto root = list.take("--root");
  if (!root.ok()) return usage_error(kMount, root.status().message(), kMountUsage);
  a.foreground = list.take_flag("--foreground", "-f");
  auto rest = list.positional();
  if (!rest.ok()) return usage_error(kMount, rest.status().message(), kMountUsage);
  if (a.common.help) {
    print_mount_usage(stdout);
    auto p = find_frontend(a.common, "fuse");
    if (p.ok())
      print_plugin_options(*p);
    else
      std::printf("\n(cannot list the options of the fuse plugin: %s)\n",
                  p.status().ToString().c_str());
    return 0;
  }
  if (rest->empty()) return usage_error(kMount, "missing MOUNTPOINT", kMountUsage);
  if (rest->size() > 1)
    return usage_error(kMount, "unexpected argument '" + (*rest)[1] + "'", kMountUsage);
  if (*fs) a.fs = **fs;
  if (*root) a.root = **root;
  if (*fs && a.fs.empty()) return usage_error(kMount, "--fs: empty name", kMountUsage);

  a.mountpoint = absolute_path(rest->front());
  struct stat st;
  if (::stat(a.mountpoint.c_str(), &st) != 0)
    return fail(kMount, Status::Error(errno, "mount point " + a.mountpoint));
  if (!S_ISDIR(st.st_mode))
    return fail(kMount,
                Status::Error(ENOTDIR, "mount point " + a.mountpoint + " is not a directory"));

  if (!a.foreground)
    return serve_in_background(
        kMount, [&](const StopSignals &signals, int ready) { return serve(a, signals, ready); });
  // Before anything starts a thread (the client's, the plugin's).
  StopSignals signals;
  if (signals.fd() < 0) return fail(kMount, Status::Error(errno, "signalfd failed"));
  return serve(a, signals, -1);
}

int cmd_umount(std::vector<std::string> args) {
  ArgList list(std::move(args));
  auto common = take_common_options(list);
  if (!common.ok()) return usage_error(kUmount, common.status().message(), kUmountUsage);
  auto rest = list.positional();
  if (!rest.ok()) return usage_error(kUmount, rest.status().message(), kUmountUsage);
  if (common->help) {
    std::fputs(kUmountUsage, stdout);
    return 0;
  }
  if (rest->empty()) return usage_error(kUmount, "missing MOUNTPOINT", kUmountUsage);
  if (rest->size() > 1)
    return usage_error(kUmount, "unexpected argument '" + (*rest)[1] + "'", kUmountUsage);
  // --timeout is a common option (connect timeout, 10 s by default): here
  // it bounds the wait, with a longer default for the write-out.
  uint32_t timeout_ms =
      common->timeout_ms == CommonOptions{}.timeout_ms ? 120000 : common->timeout_ms;
  std::string mountpoint = absolute_path(rest->front());

  pid_t pid = read_frontend_state(frontend_state_file("mount", mountpoint));

  int rc = run_fusermount(mountpoint);
  if (rc == 127 && ::geteuid() == 0) rc = ::umount2(mountpoint.c_str(), 0) == 0 ? 0 : errno;
  if (rc != 0)
    return fail(kUmount, Status::Error(EIO, "cannot unmount " + mountpoint +
                                                (rc == 127 ? " (fusermount3 is not installed)"
                                                           : " (fusermount3 -u failed: is it "
                                                             "mounted, or busy?)")));
  if (pid != 0 && !wait_process_exit(pid, timeout_ms))
    return fail(kUmount,
                Status::Error(ETIMEDOUT, "unmounted " + mountpoint + ", but its process " +
                                             std::to_string(pid) + " did not exit within " +
                                             std::to_string(timeout_ms / 1000) +
                                             " s (still writing out data?)"));
  return 0;
}

}  // namespace strata::cli
