// The OSD daemon (`strata osd --id N`): opens its Store (refusing one made
// for another OSD or cluster), listens for clients and peers, keeps a
// session with the monitor (maps, keys, boot, failure reports, stats
// beacons), heartbeats its peers, and runs its PGs on osd_op_threads shards.
//
// Threads: the messenger's I/O threads decode messages and hand each to the
// shard owning its PG; the shards run the PGs; a control thread applies new
// maps, sends heartbeats, failure reports and stats every
// heartbeat_interval_ms; the Store runs its own threads.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster_map.h"
#include "common/work_queue.h"
#include "host/plugin_loader.h"
#include "msg/keyring.h"
#include "msg/messenger.h"
#include "osd/conn_order.h"
#include "osd/heartbeat.h"
#include "osd/mon_session.h"
#include "osd/osd_config.h"
#include "osd/osd_shard.h"
#include "osd/peer_fullness.h"
#include "osd/peer_links.h"
#include "osd/pg_host.h"
#include "store/store.h"

namespace strata::osd {

class OsdDaemon final : public PgHost {
 public:
  // `env` (owned by the daemon's main) must outlive the daemon.
  OsdDaemon(OsdConfig cfg, store::StoreSettings settings, const host::PluginRegistry &reg,
            Logger &log, Env &env);
  ~OsdDaemon() override;
  OsdDaemon(const OsdDaemon &) = delete;
  OsdDaemon &operator=(const OsdDaemon &) = delete;

  // Opens the store, loads the PGs, listens, starts talking to the monitor.
  Status start();
  // Stops serving, flushes and closes the store.
  Status stop();
  // The address clients and peers reach this OSD at (after start()).
  const std::string &address() const { return bound_addr_; }

  // --- PgHost ---
  int32_t whoami() const override { return cfg_.id; }
  bool is_me_up(const cluster::MapView &map) const override;
  store::Store &store() override { return *store_; }
  Logger &log() override { return log_; }
  Env &env() override { return env_; }
  const OsdConfig &config() const override { return cfg_; }
  void send_to_osd(int32_t osd, msg::Message m) override;
  void post_to_pg(PgId pg, uint64_t generation, std::function<void(Pg &)> fn) override;
  RecoveryThrottle &recovery_throttle() override { return throttle_; }
  std::vector<PastInterval> history_intervals(PgId pg, uint64_t since) override;
  void fatal(const Status &st) override;
  void publish_stat(const PgStatSnap &s) override;
  void forget_pg(PgId pg, uint64_t generation) override;
  void drop_pg(OsdShard &shard, std::map<PgId, std::unique_ptr<Pg>>::iterator it);
  // A PG removed by this map (or by a message just before it) must be gone
  // before the map creates the PGs it needs: a pool deleted and created
  // again, or a stray copy removed just before the OSD joins the acting set
  // again, would otherwise keep the dying PG, and the shard would answer
  // "not primary, retry" for an epoch the client already has.
  void drop_forgotten_pgs(OsdShard &shard);
  uint64_t new_rep_tid() override { return next_rep_tid_.fetch_add(1); }
  void track_write(const WriteRef &w) override { writes_.track(w); }
  void untrack_write(uint64_t rep_tid) override { writes_.untrack(rep_tid); }
  bool failsafe_full() override;
  bool peer_failsafe_full(int32_t osd) const override { return peer_fullness_.failsafe_full(osd); }
  bool disk_full(uint64_t incoming = 0) override;
  bool peer_disk_full(int32_t osd) const override { return peer_fullness_.full(osd); }

 private:
  OsdShard &shard_for(PgId pg);
  MapRef current_map();

  // osd_daemon.cpp: start-up
  Status load_superblock();
  Status load_pgs();
  void persist_superblock(const MapRef &v);

  // osd_dispatch.cpp: messages in
  void on_message(const msg::ConnectionRef &conn, msg::Message &&m);
  void on_close(const msg::ConnectionRef &conn, const std::string &reason);
  void on_heartbeat(const msg::ConnectionRef &conn, const msg::Message &m);
  void on_rep_op_reply(const msg::ConnectionRef &conn, const msg::Message &m);
  // Large writes are staged on the stage pool before their op or RepOp goes
  // to its shard; ConnOrder keeps each connection's messages in order.
  // Runs stage() on the stage pool, then deliver() in conn's message order.
  void stage_then_deliver(const msg::ConnectionRef &conn, std::function<void()> stage,
                          std::function<void()> deliver);
  // An event for the shard of `pg` that runs fn if that PG (of that
  // generation) still exists there.
  std::function<void()> for_pg(PgId pg, uint64_t generation, std::function<void(Pg &)> fn);
  const OsdOp *large_write_full(const ClientOp &op) const;
  void stage_client_write(ClientOp &op, const OsdOp &write);
  bool rep_op_needs_staging(InMsg &in) const;
  void stage_rep_op(InMsg &in);
  void dispatch_client_op(OsdShard &shard, const ClientOpRef &op);
  void dispatch_pg_msg(OsdShard &shard, const InMsgRef &in);
  void answer_without_pg(const InMsgRef &in);
  std::optional<std::string> secret_of(const std::string &entity);

  // osd_maps.cpp: maps, control thread
  void tick();
  void handle_map_update(const msg::Message &m);
  void handle_auth_update(const msg::Message &m);
  void install_map(cluster::ClusterMap cm);
  void advance_shards(const MapRef &v);
  void shard_advance(OsdShard &shard, const MapRef &v);
  void maybe_boot(bool force);
  std::vector<msg::Message> on_mon_connect();
  msg::Message boot_message();
  void send_stats();

  OsdConfig cfg_;
  store::StoreSettings settings_;
  const host::PluginRegistry &reg_;
  Logger &log_;
  Env &env_;

  std::unique_ptr<store::Store> store_;
  std::string store_fsid_;
  msg::Keyring keyring_;
  std::mutex auth_mu_;
  std::map<std::string, std::string> auth_keys_;  // from the monitor; GUARDED_BY(auth_mu_)
  uint64_t auth_version_ = 0;

  std::unique_ptr<msg::Messenger> messenger_;
  std::string bound_addr_;
  std::unique_ptr<PeerLinks> links_;
  std::unique_ptr<MonSession> mon_;
  std::vector<std::unique_ptr<OsdShard>> shards_;
  // Threads that stage large writes (Store::stage: an O_DIRECT write and
  // fdatasync of the data) as messages arrive, before their ops reach a PG.
  // Staging on the PG's shard thread would stop every other PG on that
  // shard for the duration of a disk write; here several stage in parallel
  // and the shard only binds the finished stage to the transaction. Drains
  // on stop: its last deliveries go to the shards.
  std::unique_ptr<WorkQueue> stage_pool_;
  ConnOrder order_;
  RecoveryThrottle throttle_;
  HeartbeatTracker heartbeats_;

  mutable std::mutex map_mu_;
  MapRef current_;              // GUARDED_BY(map_mu_)
  std::deque<MapRef> history_;  // recent maps, oldest first; GUARDED_BY(map_mu_)
  // up_from of this OSD in the map stored by its previous run, and in the
  // first map that showed this run up: is_me_up() tells them apart.
  uint64_t stored_up_from_ = 0;
  std::atomic<uint64_t> me_up_from_{0};
  std::chrono::steady_clock::time_point last_boot_;

  std::atomic<uint64_t> next_rep_tid_{1};
  RepWriteTable writes_;

  PeerFullness peer_fullness_;
  // The disk's used share, for failsafe_full() and disk_full(), which run
  // for every write and RepOp reply: the last statvfs plus what was queued
  // since (disk_used_ratio in osd_daemon.cpp).
  double disk_used_ratio(uint64_t incoming = 0);
  struct FullCheck {
    std::mutex mu;
    uint64_t used = 0, total = 0;
    bool valid = false;
    std::chrono::steady_clock::time_point at;
    uint64_t queued_bytes = 0;
  } full_check_;
  std::atomic<bool> full_since_report_{false};  // disk_full() said so since send_stats()

  std::mutex stats_mu_;
  std::map<PgId, PgStatSnap> stats_;  // PGs this OSD is primary for; GUARDED_BY(stats_mu_)

  // The control thread: map and auth updates in arrival order, and tick()
  // every heartbeat_interval_ms (the first one at start).
  WorkQueue control_;
  bool started_ = false;
};

}  // namespace strata::osd
