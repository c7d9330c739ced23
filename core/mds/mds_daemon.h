// `strata mds --id NAME`: a metadata server process (docs/FILESYSTEM.md).
// It beacons to the monitor as mds.NAME; while the fs map says standby it
// waits; given a filesystem (state replay at incarnation I) it opens the
// filesystem's MetaStore at I, beacons active and serves clients on its
// messenger with an MdsServer. Fenced by a newer incarnation, it exits at
// once (exit code kFencedExit).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/cluster_client.h"
#include "common/config.h"
#include "mds/mds_server.h"
#include "mds/meta_store_factory.h"
#include "mon/mon_client.h"
#include "msg/keyring.h"

namespace strata::mds {

inline constexpr int kFencedExit = 75;

struct MdsDaemonConfig {
  std::string name;  // "a" for mds.a
  std::string conf_path;
  std::vector<std::string> overrides;
  std::string fsid;
  std::string mon_addr;
  std::string keyring;
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string want_fs;
  uint64_t beacon_interval_ms = 500;
  uint64_t cache_limit = 256u << 20;
  uint64_t lease_ms = 30000;
  uint64_t max_file_size = 1ull << 40;
  uint64_t inline_max = 16384;  // mds_inline_data_max (docs/FILESYSTEM.md, "Inline data")
  uint64_t delegate_inos = 1024;
  MetaStoreOptions store;
};

Result<MdsDaemonConfig> load_mds_config(const Config &config, const std::string &name);

class MdsDaemon {
 public:
  MdsDaemon(MdsDaemonConfig cfg, Logger &log);
  ~MdsDaemon();

  Status start();
  // Runs until stop_requested (SIGTERM) or fencing; returns the exit code.
  int run(const std::atomic<bool> &stop_requested);
  Status stop();

 private:
  std::optional<std::string> secret_of(const std::string &entity);
  void send_beacon();
  void on_map(std::shared_ptr<const cluster::ClusterMap> m);
  Status take_over(const cluster::FsInfo &fs, uint64_t incarnation);
  // Asks the monitor for the cluster's usage (its "status"): statfs answers
  // from this cache, never with a round trip of its own.
  void refresh_usage();
  StatfsFigures cached_usage() const;

  MdsDaemonConfig cfg_;
  Logger &log_;
  std::string who_;
  msg::Keyring keyring_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> auth_keys_;
  std::shared_ptr<const cluster::ClusterMap> map_;
  // From each map: why the cluster takes no more data, or empty
  // (MdsServerOptions::full). Its own lock: the server asks per request.
  mutable std::mutex full_mu_;
  std::string full_why_;
  cluster::MdsState state_ = cluster::MdsState::kStandby;
  uint32_t fs_id_ = 0;
  uint64_t incarnation_ = 0;
  std::atomic<bool> fenced_{false};
  // The data pool's share of the cluster (bytes / pool size), see refresh_usage.
  std::atomic<uint64_t> usage_total_{0}, usage_avail_{0};
  uint32_t data_pool_ = 0;
  std::string bound_addr_;
  // The server's view of each client connection (kept while it is open).
  std::map<const msg::Connection *, std::weak_ptr<ClientLink>> links_;
  std::map<const msg::Connection *, LinkRef> strong_links_;

  std::unique_ptr<mon::MonClient> mon_;
  std::shared_ptr<client::ClusterClient> cluster_;
  std::unique_ptr<msg::Messenger> messenger_;
  std::unique_ptr<MetaStore> store_;
  std::unique_ptr<MdsServer> server_;
};

}  // namespace strata::mds
