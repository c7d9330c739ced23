// A real cluster for integration tests (client, OSD): `strata up` (a
// monitor and N `strata osd` processes, by default on the kv backend, with a
// tmpfs journal, short heartbeats) in a temporary directory, torn down with
// `strata down --purge` (STRATA_TEST_KEEP_CLUSTER=1 keeps it). OSDs can be
// killed (-9), stopped cleanly (so the test can open their stores with the
// Store API) and started again. Compiled into each test binary that uses it,
// which defines STRATA_TEST_BIN_DIR and STRATA_TEST_PLUGIN_DIR.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

// Neither the client API nor the Store here: the cluster harness and the
// offline store checks (store_check.h) stay separate.
struct strata_cluster;

namespace strata::testing {

class ProcessCluster {
 public:
  // `sets` go into the config (`strata up --set k=v`, after the harness's
  // own short heartbeats, so they can override them).
  // `backend` xfs or btrfs puts each OSD on a loop-mounted image of its own.
  explicit ProcessCluster(int osds = 3, std::vector<std::string> sets = {},
                          const std::string &backend = "kv");
  ~ProcessCluster();
  ProcessCluster(const ProcessCluster &) = delete;
  ProcessCluster &operator=(const ProcessCluster &) = delete;

  // False (with why_not()) when the cluster could not be started here;
  // not_built() when the strata binary is missing altogether.
  bool ok() const { return ok_; }
  bool not_built() const { return not_built_; }
  const std::string &why_not() const { return why_not_; }
  const std::string &dir() const { return dir_; }
  std::string conf() const { return dir_ + "/strata.conf"; }
  int osds() const { return osds_; }

  // Runs `strata ARGS --conf <conf>`: exit code, output (stdout+stderr) in *out.
  int cli(const std::string &args, std::string *out = nullptr) const;

  pid_t osd_pid(int id) const;  // 0 when not running
  void kill_osd(int id);        // SIGKILL
  // SIGTERM and wait for the process to exit (its store is then closed).
  void stop_osd(int id);
  void start_osd(int id);
  // Waits until every PG is active+clean (REQUIREs it within `timeout`).
  void wait_clean(std::chrono::seconds timeout = std::chrono::seconds(120));

  // A connected client.admin (REQUIREs success), with extra config
  // overrides; free with strata_cluster_shutdown.
  strata_cluster *connect(const std::vector<std::string> &overrides = {});

  std::string store_dir(int id) const;

 private:
  std::string dir_;
  int osds_ = 0;
  bool ok_ = false;
  bool not_built_ = false;
  std::string why_not_;
};

// In a Catch2 test: skips (with a warning) only when there is nothing to
// start, and fails when a cluster that should come up does not.
#define REQUIRE_CLUSTER(c)                  \
  do {                                      \
    if (!(c).ok()) {                        \
      if ((c).not_built()) {                \
        WARN("skipped: " << (c).why_not()); \
        return;                             \
      }                                     \
      FAIL((c).why_not());                  \
    }                                       \
  } while (0)

// The strata binary of this build and the build's plugin directory.
std::string strata_binary();
std::string plugin_dir();

}  // namespace strata::testing
