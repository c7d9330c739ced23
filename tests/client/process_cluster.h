// A real cluster for client tests: `strata up` (a monitor and N `strata
// osd` processes, kv backend, tmpfs journal) in a temporary directory,
// `strata down --purge` at the end. Skips (with the reason) when the
// binary or a daemon cannot start here.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "strata/client.h"

namespace clienttest {

class ProcessCluster {
 public:
  // `sets` go into the config (`strata up --set`), e.g. short heartbeats.
  ProcessCluster(int osds, std::vector<std::string> sets = {});
  ~ProcessCluster();

  bool ok() const { return ok_; }
  const std::string &why_not() const { return why_not_; }
  bool not_built() const { return not_built_; }
  const std::string &dir() const { return dir_; }
  std::string conf() const { return dir_ + "/strata.conf"; }

  // A connected client.admin through the C API (REQUIREs success).
  strata_cluster_t connect(std::vector<std::string> overrides = {});

  // Runs `strata ARGS --conf <conf>`; returns the exit code, output in *out
  // (stdout and stderr).
  int cli(const std::string &args, std::string *out = nullptr) const;

  pid_t osd_pid(int id) const;
  // SIGKILL, no goodbye: the monitor learns from missing heartbeats.
  void kill_osd(int id);
  // Starts `strata osd --id N` again on the same store.
  void start_osd(int id);

 private:
  std::string dir_;
  bool ok_ = false;
  bool not_built_ = false;
  std::string why_not_;
};

// The strata binary of this build.
std::string strata_binary();

}  // namespace clienttest
