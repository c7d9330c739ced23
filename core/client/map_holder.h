// The cluster map a client currently holds, with its placement plugin
// instantiated (cluster::MapView), and waiting for a given epoch.
//
// Thread-safe: the mon session installs maps from a network thread while
// ops read the current view from any thread. A view is immutable; readers
// keep the shared_ptr for as long as they use it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster_map.h"
#include "common/status.h"
#include "host/plugin_loader.h"

namespace strata::client {

class MapHolder {
 public:
  // plugin_path: directories searched for libstrata_placement_<name>.so
  // (empty: host::default_plugin_path()).
  explicit MapHolder(std::vector<std::string> plugin_path);

  // The current view; null before the first map.
  std::shared_ptr<const cluster::MapView> current() const;
  uint64_t epoch() const;

  // Makes `m` the current map if it is newer than the one held. Fails when
  // its placement plugin cannot be found or the map does not instantiate;
  // the held map stays then.
  Status install(cluster::ClusterMap m);

  // Waits until the held epoch is >= epoch, or the deadline, or close(),
  // or (while no map is held) a failed install(): waiting longer would not
  // help a map whose placement plugin is missing.
  bool wait_for(uint64_t epoch, std::chrono::steady_clock::time_point deadline);
  // Why the first map could not be installed (OK while none failed, or
  // once a map is held).
  Status first_map_error() const;
  // Wakes every waiter for good (shutdown).
  void close();

 private:
  Result<host::Plugin> placement_plugin(const std::string &name);

  std::vector<std::string> plugin_path_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const cluster::MapView> view_;
  bool closed_ = false;
  Status first_error_;  // GUARDED_BY(mu_): an install failed before any map was held
  std::mutex plugins_mu_;
  std::map<std::string, host::Plugin> plugins_;  // loaded once, kept mapped
};

}  // namespace strata::client
