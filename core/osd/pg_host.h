// What a PG needs from the OSD around it: identity, the Store, sending to
// peers, getting back onto its shard thread, the recovery throttle, map
// history and stats publishing. The daemon implements it; keeping PGs
// behind this interface keeps them free of sockets and threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_map.h"
#include "common/env.h"
#include "common/log.h"
#include "msg/messenger.h"
#include "msg/wire_codec.h"
#include "osd/osd_config.h"
#include "osd/rep_write.h"
#include "osd/types.h"
#include "store/store.h"

namespace strata::osd {

class Pg;
using MapRef = std::shared_ptr<const cluster::MapView>;

// A message from a peer, with its payload opened once for reading.
struct InMsg {
  PgId pgid;               // the PG it addresses
  uint64_t map_epoch = 0;  // the sender's map epoch (0 for replies)
  msg::ConnectionRef conn;
  msg::Message m;
  std::optional<msg::PayloadReader> reader;
  // A RepOp whose large writes a StagePool thread staged on arrival: its
  // transaction, decoded there with those writes bound to their stages
  // (txn_error: why decoding failed).
  std::optional<store::Transaction> txn;
  std::vector<store::StagedWriteRef> staged;
  std::string txn_error;
  template <class T>
  typename T::Reader root() {
    return reader->root<T>();
  }
};
using InMsgRef = std::shared_ptr<InMsg>;

// Objects being recovered at once by this OSD (osd_recovery_max_active),
// shared by all PGs so that recovery never crowds out client I/O.
class RecoveryThrottle {
 public:
  explicit RecoveryThrottle(int max) : max_(max) {}
  bool try_acquire() {
    int cur = active_.load();
    while (cur < max_)
      if (active_.compare_exchange_weak(cur, cur + 1)) return true;
    return false;
  }
  void release() { active_.fetch_sub(1); }
  int active() const { return active_.load(); }

 private:
  const int max_;
  std::atomic<int> active_{0};
};

// What a PG reports for `strata status` (through OsdStats).
struct PgStatSnap {
  PgId pgid;
  bool primary = false;
  std::string state;
  uint64_t objects = 0, bytes = 0;
  EVersion last_update;
  std::vector<int32_t> acting;
  uint64_t epoch = 0;
  // Objects scrub or a read found damaged (oid, why), at most
  // kMaxDamagedReported of them, and how many there are in all.
  std::vector<std::pair<std::string, std::string>> damaged = {};
  uint64_t damaged_total = 0;
  uint64_t read_repairs = 0;
};
inline constexpr size_t kMaxDamagedReported = 32;

class PgHost {
 public:
  virtual ~PgHost() = default;
  virtual int32_t whoami() const = 0;
  // Whether `map` shows this run of the OSD up (its own address): an older
  // map may still show the previous run.
  virtual bool is_me_up(const cluster::MapView &map) const = 0;
  virtual store::Store &store() = 0;
  virtual Logger &log() = 0;
  // The daemon's clock and failpoints (osd_failpoints.h).
  virtual Env &env() = 0;
  virtual const OsdConfig &config() const = 0;
  // Queues m for a peer OSD (never blocks).
  virtual void send_to_osd(int32_t osd, msg::Message m) = 0;
  // Runs fn on the PG's shard thread, if the PG instance `generation` of
  // `pg` still exists then. Callable from any thread.
  virtual void post_to_pg(PgId pg, uint64_t generation, std::function<void(Pg &)> fn) = 0;
  virtual RecoveryThrottle &recovery_throttle() = 0;
  // Intervals of `pg` from the maps this OSD has seen, from epoch `since`
  // on (the current interval excluded).
  virtual std::vector<PastInterval> history_intervals(PgId pg, uint64_t since) = 0;
  // The local store failed: the OSD stops (a replica that cannot persist
  // must not acknowledge anything).
  virtual void fatal(const Status &st) = 0;
  virtual void publish_stat(const PgStatSnap &s) = 0;
  // Asks the shard to delete this PG (after its collection is removed).
  virtual void forget_pg(PgId pg, uint64_t generation) = 0;
  // Writes in flight, findable by rep tid from the threads replica acks
  // arrive on. new_rep_tid() is unique across this OSD's PGs.
  virtual uint64_t new_rep_tid() = 0;
  virtual void track_write(const WriteRef &w) = 0;
  virtual void untrack_write(uint64_t rep_tid) = 0;
  // Whether this OSD's own disk is past osd_failsafe_full_ratio (a primary
  // refuses new writes; peers hear it with every reply and heartbeat).
  virtual bool failsafe_full() = 0;
  // Whether peer `osd` last said so of its own disk (peer_fullness.h).
  virtual bool peer_failsafe_full(int32_t osd) const = 0;
  // Whether this OSD's own disk is past osd_full_ratio, or would be
  // with `incoming` bytes more (a primary refuses writes that are not
  // full_try, without waiting for the map's full flag), and whether peer
  // `osd` last said so of its own.
  virtual bool disk_full(uint64_t incoming = 0) = 0;
  virtual bool peer_disk_full(int32_t osd) const = 0;
};

}  // namespace strata::osd
