// Helpers for the monitor tests: scratch directories, the crush plugin of
// the build, small maps, keyrings, and a `strata mon` child process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_map.h"
#include "common/log.h"
#include "host/plugin_loader.h"
#include "msg/keyring.h"

namespace mon_test {

// A directory removed (recursively) by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string &label);
  ~TempDir();
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

strata::host::Plugin crush();
strata::Logger &quiet_log();  // errors only

// A map with `n` OSDs (osd.i on host "host<i % hosts>"), all up and in,
// and one pool (id 1, size `size`, pg_num 16, rule chosen as the monitor
// would), placement generated.
strata::cluster::ClusterMap sample_map(int n, int hosts, uint32_t size = 3);

// Waits until pred() or the timeout; returns pred().
bool eventually(const std::function<bool()> &pred,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

// A `strata` child process (the build's binary) with output to a log file.
class StrataProcess {
 public:
  StrataProcess(std::vector<std::string> args, const std::string &log_path);
  ~StrataProcess();  // SIGKILL + reap if still running
  pid_t pid() const { return pid_; }
  bool running();
  void terminate();  // SIGTERM and wait
  int wait();        // exit code, or 128 + signal
  void kill9();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// Runs `strata args...` to completion; returns the exit code, output in *out.
int run_strata(const std::vector<std::string> &args, std::string *out = nullptr);

// A monitor in a scratch directory: keyring (mon, client.admin, osd.0..N-1),
// config with a free port and short timers, mkfs, then the daemon.
class MonFixture {
 public:
  explicit MonFixture(int osds = 4, std::map<std::string, std::string> mon_settings = {});
  ~MonFixture();
  std::string addr() const { return addr_; }
  const strata::msg::Keyring &keyring() const { return keyring_; }
  std::string secret(const std::string &entity) const { return *keyring_.secret(entity); }
  const std::string &conf() const { return conf_; }
  std::string log_text() const;
  StrataProcess &process() { return *proc_; }
  void restart();

 private:
  void start();
  TempDir dir_;
  std::string addr_, conf_;
  strata::msg::Keyring keyring_;
  std::unique_ptr<StrataProcess> proc_;
};

}  // namespace mon_test
