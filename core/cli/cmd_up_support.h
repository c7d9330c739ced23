// The pieces `strata up` / `strata down` are made of: daemons started in
// the background with a pid file, stopped by pid file, loop-mounted file
// system images, and the local cluster's directory layout.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::cli::up {

// Where everything of a local cluster lives under its directory.
struct Layout {
  std::string dir;
  std::string conf() const { return dir + "/strata.conf"; }
  std::string keyring() const { return dir + "/keyring"; }
  std::string mon_data() const { return dir + "/mon"; }
  std::string pid(const std::string &daemon) const { return dir + "/" + daemon + ".pid"; }
  std::string log(const std::string &daemon) const { return dir + "/" + daemon + ".log"; }
  std::string osd_mount(int id) const { return dir + "/osd." + std::to_string(id); }
  std::string osd_image(int id) const { return dir + "/osd." + std::to_string(id) + ".img"; }
  std::string osd_store(int id) const { return osd_mount(id) + "/store"; }
  // Present once `strata osd --mkfs` succeeded for the OSD.
  std::string made(int id) const { return dir + "/osd." + std::to_string(id) + ".made"; }
};

// The path of the running `strata` binary.
std::string self_exe();

// Starts argv as a daemon: double fork, setsid, stdin /dev/null, stdout
// and stderr appended to `log_path`, cwd /. Writes the daemon's pid to
// `pid_path` and returns it. Fails if the program could not be executed.
Result<pid_t> spawn_daemon(const std::vector<std::string> &argv, const std::string &log_path,
                           const std::string &pid_path);

// The pid in `pid_path` if that process is alive and its command line
// mentions `marker` (so a recycled pid is never signalled); else 0.
pid_t live_daemon(const std::string &pid_path, const std::string &marker);

// SIGTERM, then SIGKILL after `grace`; removes the pid file. True if a
// process was stopped.
bool stop_daemon(const std::string &pid_path, const std::string &marker,
                 std::chrono::milliseconds grace, std::string *what);

// Runs a program to completion; its stderr in the error on failure.
Status run(const std::vector<std::string> &argv);

bool is_mountpoint(const std::string &path);
// A fresh sparse image of `bytes` made with mkfs.<fs> and mounted on `mnt`.
Status mount_image(const std::string &fs, const std::string &image, const std::string &mnt,
                   uint64_t bytes);
// Mounts an existing image again (after `strata down`).
Status remount_image(const std::string &image, const std::string &mnt);
// Unmounts `mnt` if mounted and detaches every loop device backed by
// `image`. Idempotent.
Status unmount_image(const std::string &image, const std::string &mnt);

// A TCP port on 127.0.0.1 nobody listens on now; `preferred` if it is free.
uint16_t free_port(uint16_t preferred);

}  // namespace strata::cli::up
