// One placement group on this OSD: its log, info and missing set (kept in
// the Store), its place in the current interval (acting set, primary), and
// the state machine that runs on top:
//
//   primary:  peering (query the prior set, plan) -> [scanning its own copy
//             when it must backfill itself] -> active (+recovering /
//             +backfilling / +degraded) -> active+clean
//             or down / incomplete when the copies it needs are not there.
//   replica:  waits for the primary's activation, then applies RepOps and
//             pushes in the order the primary sent them.
//   stray:    holds a copy outside the acting set; answers queries until
//             the primary, clean again, tells it to remove the copy.
//
// Client writes: the primary serialises ops per object (except plain
// writes, which follow the one before them without waiting for it to
// settle: see do_op), builds one store transaction, sends it to every
// acting replica in parallel while applying it locally, and answers the
// client when every copy (its own included) is durable. Resent writes are
// answered from the log (exactly once).
//
// Threading: every method runs on the PG's shard thread, except what the
// store callbacks do through PgHost::post_to_pg and the acknowledgement
// counting of RepWrite (rep_write.h).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "osd/peering_plan.h"
#include "osd/pg_host.h"
#include "osd/pg_log.h"
#include "osd/wire_convert.h"

namespace strata::osd {

class Pg {
 public:
  Pg(PgHost &host, PgId pgid, uint64_t generation);
  ~Pg();
  Pg(const Pg &) = delete;
  Pg &operator=(const Pg &) = delete;

  // Loads info, log and missing set when the collection exists.
  Status load();
  PgId pgid() const { return pgid_; }
  uint64_t generation() const { return generation_; }
  // Its local copy is removed and the shard is asked to delete it: the
  // shard must not hand it messages or maps any more.
  bool forgotten() const { return forgotten_; }
  bool has_local() const { return local_; }
  bool is_primary() const { return primary_ == host_.whoami(); }
  bool in_acting() const;
  uint64_t interval_start() const { return interval_start_; }

  // --- events, on the shard thread ---
  void advance_map(const MapRef &map);
  void on_client_op(const ClientOpRef &op);
  void on_pg_list(const InMsgRef &in);
  void on_pg_command(const InMsgRef &in);
  void on_rep_op(const InMsgRef &in);
  void on_query(const InMsgRef &in);
  void on_notify(const InMsgRef &in);
  void on_activate(const InMsgRef &in);
  void on_push(const InMsgRef &in);
  void on_push_reply(const InMsgRef &in);
  void on_pull(const InMsgRef &in);
  void on_scan(const InMsgRef &in);
  void on_scan_reply(const InMsgRef &in);
  void on_backfill_done(const InMsgRef &in);
  void on_remove(const InMsgRef &in);
  // A link to `osd` dropped: messages to it may be lost.
  void on_peer_reset(int32_t osd);
  void on_tick();
  // Deletes the local copy (pool removed); the shard forgets the PG after.
  void remove_local();

  // A local transaction this PG queued became durable (posted back).
  void local_done();
  // A write finished (replied): release its object (shard thread).
  void write_settled(uint64_t rep_tid);

 private:
  enum class State {
    kInitial,     // no interval yet
    kStray,       // not in the acting set (or replica not activated yet)
    kReplica,     // activated replica
    kGetInfo,     // primary: collecting notifies
    kScanSelf,    // primary: comparing its copy with the authoritative one
    kActive,      // primary: serving
    kDown,        // primary: a past interval's copies are unreachable
    kIncomplete,  // primary: no complete copy answered
  };


  // Per-object serialisation: writes and recoveries in flight, and the ops
  // waiting for them.
  struct ObjectSlot {
    int writes = 0;
    bool recovering = false;
    std::deque<std::function<void()>> waiters;
    bool busy() const { return writes > 0 || recovering; }
  };

  // A replica of an active primary: what it still lacks.
  struct Backfill {
    std::string last_started;  // objects <= this get full RepOps
    std::deque<std::string> local;
    bool local_more = true;
    std::string local_cursor;
    std::deque<std::pair<std::string, EVersion>> remote;
    bool remote_more = true;
    std::string remote_cursor;
    uint64_t scan_tid = 0;  // in flight when non-zero
    int pushes = 0;
  };
  struct PeerState {
    MissingSet missing;
    bool backfill = false;
    Backfill bf;
  };

  // One object being recovered: a pull into the primary, or a push to the
  // replicas that lack it.
  struct Recovery {
    uint64_t tid = 0;
    bool pull = false;
    int32_t source = -1;
    std::set<int32_t> targets;  // pushes awaiting a reply
    std::set<int32_t> backfill_targets;
    bool throttled = false;     // holds a RecoveryThrottle slot
  };

  struct Scrub;

  // pg.cpp: interval, state, persistence helpers
  void start_interval(const MapRef &map, const std::vector<int32_t> &acting, int32_t primary);
  void reset_primary_state();
  void requeue_all(std::deque<std::function<void()>> &into);
  void run_waiting(std::deque<std::function<void()>> &q);
  void persist_info(store::Transaction &t);
  void queue_local(store::Transaction t, std::function<void(Pg &)> on_durable = {});
  // Queues t and, once it is durable, sends `reply` on conn (a replica's
  // answer to a RepOp or a recovery push). `what` names it in errors.
  void queue_then_reply(store::Transaction t, const msg::ConnectionRef &conn, msg::Message reply,
                        const char *what, store::Store::Ack when);
  void when_local_drained(std::function<void()> fn);
  void ensure_local(store::Transaction &t);
  std::string state_string() const;
  void publish();
  bool stale(uint64_t msg_epoch) const { return msg_epoch < interval_start_; }
  // Fills the fields every PG message to a peer starts with: which PG, and
  // the map epoch and interval it was sent in (receivers drop stale ones).
  template <class Builder>
  void stamp(Builder &b) const {
    b.setPool(pgid_.pool);
    b.setSeed(pgid_.seed);
    b.setMapEpoch(map_->epoch());
    b.setIntervalEpoch(interval_start_);
  }
  void send_reply(const msg::ConnectionRef &conn, msg::Message m);
  const cluster::PoolInfo *pool() const;
  ObjectSlot &slot(const std::string &oid) { return slots_[oid]; }
  void release_slot_if_idle(const std::string &oid);
  void kick(const std::string &oid);
  void count_objects();

  // Objects in (after, end] ("" end = no end), at most `limit` (0 = all),
  // without the pg-meta object; *more when the listing stopped at limit.
  std::vector<std::string> list_range(const std::string &after, const std::string &end,
                                      size_t limit, bool *more);
  struct ScanItemT {
    std::string oid;
    EVersion version;
    uint64_t size = 0, digest = 0;
    int32_t rc = 0;
  };
  std::vector<ScanItemT> scan_items(const std::string &after, const std::string &end, size_t limit,
                                    bool deep, bool *more);

  // pg_ops.cpp: client ops and replication
  void do_op(const ClientOpRef &op);
  void do_op(const ClientOpRef &op, bool from_slot);
  void do_read(const ClientOpRef &op);
  // pg_read_repair.cpp: a read the primary's copy could not serve (EIO:
  // a checksum mismatch, a vanished file, a digest mismatch) is served
  // from a good replica after the primary's copy is replaced by it.
  // True when the op now waits for that repair.
  bool start_read_repair(const ClientOpRef &op, const std::string &why);
  // A pull for a read repair failed on `from`: try the next copy, or give
  // up (every copy bad) when none is left.
  void read_repair_pull_failed(const std::string &oid, int32_t from, int32_t rc);
  void read_repair_done(const std::string &oid, int32_t from);
  // Objects scrub or a read found bad, persisted in the PG meta object so
  // that a restarted primary still reports them.
  void set_damaged(store::Transaction &t, const std::string &oid, const std::string &why);
  void clear_damaged(store::Transaction &t, const std::string &oid);
  void do_write(const ClientOpRef &op);
  // Why a write may not take more space now (empty: it may): an OSD of the
  // acting set is marked full, this OSD's own disk passed the failsafe
  // ratio, or staging its data hit the reserve.
  std::string space_refusal(const ClientOp &op) const;
  // Whether the map marks osd backfillfull (or full): recovery and
  // backfill push nothing there but what a waiting write needs.
  bool too_full_for_recovery(int32_t osd) const;
  void reply_retry(const ClientOpRef &op);
  bool degraded(const std::string &oid) const;
  void maybe_trim_log(store::Transaction &t);
  void note_backfill_write(Backfill &bf, const std::string &oid);
  void do_pg_list(const InMsgRef &in);

  // pg_peering.cpp
  void start_peering();
  void send_queries();
  void check_peering_done();
  PeerReport own_report() const;
  void adopt_plan_locally(const PeerRecovery &rec);
  void activate();
  void start_self_scan();
  void self_scan_step();
  void finish_self_scan();
  void apply_activate(uint64_t les, bool backfill, const EVersion &rewind_to,
                      std::vector<LogEntry> entries, MissingSet missing, const EVersion &log_tail);

  // pg_recovery.cpp
  void recover();
  // 1 started, 0 nothing to do (or already), -1 throttle full, -2 unfound.
  int start_object_recovery(const std::string &oid, bool priority);
  int32_t pull_source(const std::string &oid) const;
  Result<store::Transaction> build_push_txn(const std::string &oid, bool *exists, EVersion *version);
  // A received push of `oid` that also removes the companions this copy
  // has and the pushed copy may not (object_snaps.h).
  store::Transaction without_stale_companions(const std::string &oid, store::Transaction t);
  void send_push(const std::string &oid, const std::set<int32_t> &targets, Recovery &rec);
  void recovery_done(const std::string &oid);
  void backfill_step(int32_t peer, PeerState &ps);
  void maybe_clean();
  bool is_clean() const;

  // pg_scrub.cpp
  void start_scrub(const InMsgRef &in);
  void scrub_step();
  void scrub_compare();
  void finish_scrub(int32_t rc, const std::string &why);
  bool scrub_blocks(const std::string &oid) const;
  bool scrub_tid_matches(uint64_t tid) const;
  void scrub_reply(int32_t from, std::vector<ScanItemT> items);
  void scrub_repaired(const std::string &oid);
  void record_scrub_findings(const Scrub &s, const std::string &kind);
  static constexpr std::string_view kLightScrubPrefix = "scrub: ";
  static constexpr std::string_view kUnreadablePrefix = "read: ";
  bool any_backfill() const;

  PgHost &host_;
  const PgId pgid_;
  const uint64_t generation_;
  bool forgotten_ = false;
  const std::string coll_;
  const std::string name_;  // "pg 1.1f" for messages

  bool local_ = false;  // the collection exists in the store
  PgInfo info_;
  PgLog log_;
  MissingSet missing_;  // own; persisted

  // The current interval.
  MapRef map_;
  uint64_t interval_start_ = 0;
  std::vector<int32_t> acting_;
  int32_t primary_ = -1;
  std::map<int32_t, uint64_t> acting_up_from_;
  State state_ = State::kInitial;
  std::string state_detail_;

  // Local transactions queued and not yet durable, and what waits for none.
  uint64_t local_pending_ = 0;
  std::vector<std::function<void()>> on_drained_;

  // --- primary ---
  std::map<int32_t, PeerReport> reports_;
  std::set<int32_t> queried_;
  std::vector<PastInterval> intervals_;
  PeeringPlan plan_;
  std::chrono::steady_clock::time_point peering_since_;
  // Self-scan (backfilling the primary's own copy from the authoritative one).
  struct SelfScan {
    std::string cursor;  // auth listing position
    uint64_t tid = 0;
    std::vector<std::pair<std::string, EVersion>> auth_items;
  };
  SelfScan self_scan_;

  std::map<int32_t, PeerState> peers_;  // acting replicas
  std::set<int32_t> strays_;             // hold a copy outside the acting set
  uint64_t next_tid_ = 1;
  std::map<uint64_t, WriteRef> in_flight_;  // by rep tid
  std::unordered_map<std::string, ObjectSlot> slots_;
  std::map<std::string, Recovery> recovering_;
  std::set<std::string> unfound_;
  std::deque<std::function<void()>> waiting_active_;
  std::deque<std::function<void()>> waiting_min_size_;
  std::unique_ptr<Scrub> scrub_;
  // Objects being read-repaired -> the replicas whose copies failed too
  // (marked missing for the repair; unmarked if no copy is good).
  std::map<std::string, std::set<int32_t>> read_repairing_;
  uint64_t read_repairs_ = 0;  // copies this primary replaced after a failed read
  // oid -> why (scrub findings, objects no copy of which could be read).
  std::map<std::string, std::string> damaged_;
  bool clean_ = false;
  uint64_t objects_ = 0, bytes_ = 0;
  std::chrono::steady_clock::time_point counted_at_;
  EVersion counted_at_version_;  // log head when objects_/bytes_ were counted
};

}  // namespace strata::osd
