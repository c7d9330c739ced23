// ClusterClient: everything one connection to a cluster owns — its
// configuration, the monitor session (mon::MonClient), the cluster map with
// placement (MapHolder), the messenger to the OSDs, the Objecter and its
// background threads. The C API's strata_cluster_t wraps one; nothing in
// the client library is global, so a process may hold several.
//
// Lifecycle: create() (reads the config) -> connect() -> ... -> shutdown().
// A failed connect() leaves it ready for another connect(). After
// shutdown() every call fails with -ESHUTDOWN; the object itself lives
// until the last shared_ptr (the C API's ioctx handles hold one) goes.
//
// Threading: every public method is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "client/background.h"
#include "client/client_settings.h"
#include "client/map_holder.h"
#include "client/objecter.h"
#include "client/service_session.h"
#include "common/config.h"
#include "common/log.h"
#include "mon/mon_client.h"
#include "msg/messenger.h"

namespace strata::client {

struct ClusterArgs {
  std::string conf_path;         // "" = $STRATA_CONF, else ./strata.conf if present
  bool use_default_conf = true;  // false: no file unless conf_path is given
  std::string entity;            // "" = client_name from the config, else client.admin
  std::vector<std::string> overrides;  // "key=value"
};

using CommandArgs = std::vector<std::pair<std::string, std::string>>;

class ClusterClient {
 public:
  static Result<std::shared_ptr<ClusterClient>> create(const ClusterArgs &args);
  ~ClusterClient();
  ClusterClient(const ClusterClient &) = delete;
  ClusterClient &operator=(const ClusterClient &) = delete;

  // Before connect(): -EISCONN after. Unknown keys and bad values: -EINVAL.
  Status conf_set(const std::string &key, const std::string &value);
  Result<std::string> conf_get(const std::string &key) const;

  // Connects to the monitor and waits for the first map (timeout 0: 30 s).
  Status connect(std::chrono::milliseconds timeout);
  // Fails what is in flight with -ESHUTDOWN and stops every thread.
  // Idempotent; must not be called from a completion callback.
  void shutdown();

  bool connected() const { return state_.load() == State::kConnected; }
  // OK when connected; else the -ENOTCONN / -ESHUTDOWN to report.
  Status usable() const;

  const std::string &entity() const { return entity_; }
  const std::string &instance_id() const { return instance_; }

  std::shared_ptr<const cluster::MapView> map() const;
  uint64_t epoch() const;
  bool wait_for_epoch(uint64_t epoch, std::chrono::milliseconds timeout);

  // The Objecter, or null before connect().
  Objecter *objecter() { return objecter_.get(); }

  // Synchronous forms. Fail with -EDEADLK on a completion-callback thread.
  Result<OpOutcome> execute(uint32_t pool, std::string oid, ObjectOperation op);
  Result<PgListOutcome> pg_list(uint32_t pool, uint32_t seed, const std::string &start_after,
                                uint32_t limit);
  Result<PgCommandOutcome> pg_command(uint32_t pool, uint32_t seed, bool deep, bool repair);

  // A monitor command; when it succeeds and changed the map, returns once
  // this client holds that map (or after `timeout`).
  // How long a monitor command waits: client_op_timeout_ms, 30 s when that
  // is 0 (ops may wait for ever; an administrative command should not).
  std::chrono::milliseconds command_timeout() const {
    return settings_.op_timeout.count() > 0 ? settings_.op_timeout : std::chrono::seconds(30);
  }
  Result<mon::MonCommandResult> mon_command(const std::string &prefix, const CommandArgs &args,
                                            std::chrono::milliseconds timeout =
                                                std::chrono::seconds(30));

  // From the map this client holds.
  Result<cluster::PoolInfo> pool_by_name(const std::string &name) const;
  Result<cluster::PoolInfo> pool_by_id(uint32_t id) const;
  // The same, but a pool the held map lacks is looked for again in the
  // monitor's latest map (another client may have just created it).
  Result<cluster::PoolInfo> find_pool(const std::string &name);
  Result<cluster::PoolInfo> find_pool(uint32_t id);
  // Waits until this client holds the map the monitor has now.
  Status refresh_map(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::vector<cluster::PoolInfo> pools() const;

  Logger &log() { return *log_; }

  // Opens a service session (strata_session_open): -EINVAL for a service
  // other than "mds", -ENOENT when the map has no filesystem `target`.
  // `owner` must keep this client alive (the session's thread uses it).
  Result<std::shared_ptr<ServiceSession>> open_session(const std::string &service,
                                                       const std::string &target,
                                                       SessionCallback cb,
                                                       std::shared_ptr<void> owner);

 private:
  enum class State { kCreated, kConnecting, kConnected, kShutDown };
  ClusterClient() = default;
  void teardown();  // stops and frees what connect() built

  Config config_;
  std::string entity_;
  std::string instance_;
  ClientSettings settings_;

  mutable std::mutex mu_;  // connect/shutdown/conf_set against each other
  std::atomic<State> state_{State::kCreated};
  std::FILE *log_file_ = nullptr;
  std::unique_ptr<Logger> log_;
  std::unique_ptr<MapHolder> maps_;
  std::unique_ptr<msg::Messenger> messenger_;
  std::unique_ptr<Background> bg_;
  std::unique_ptr<Objecter> objecter_;
  std::unique_ptr<mon::MonClient> mon_;
  // Service sessions: frames of types 1024..2047 and every map go there.
  std::unique_ptr<ServiceSessions> sessions_;
  std::mutex map_error_mu_;
  std::string map_error_;  // why the last map could not be used
};

}  // namespace strata::client
