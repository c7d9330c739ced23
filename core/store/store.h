// The object store an OSD runs: one backend plugin + one journal plugin,
// composed by the host.
//
// Write path (write-ahead): queue() validates the transaction, resolves
// appends to absolute writes, moves large full-object writes to staged
// writes (their bytes go straight to the backend, only metadata is
// journaled), assigns the next sequence number and appends the encoded
// transaction to the journal. Transactions are applied in sequence order
// once they are durable (or at once, in parallel with the journal, for
// backends that roll back to their last checkpoint after a crash), then the
// caller's callback runs: a callback means durable AND visible to reads.
// Successful callbacks run in sequence order.
//
// Early acknowledgement (Ack::kDurable): the callback runs as soon as the
// journal has the transaction, before it is applied; the apply follows on
// its own. Reads keep the guarantee "visible once acknowledged": a read of
// an object with an acknowledged but unapplied transaction waits for that
// apply (listing a collection waits for all of its objects). This takes the
// backend's apply (file creation, omap updates) off the acknowledgement
// path, the way a write-ahead log is meant to. Transactions that create or
// remove collections are always acknowledged once applied. Such a callback
// must not read what it acknowledges: the apply may be waiting for the
// callback's thread.
//
// Who applies: the apply thread, except on the depth-1 path. When the
// journal reports a transaction durable that is the only one queued, and
// nothing else is using the backend, the journal's callback applies it and
// runs the caller's callback right there, saving a thread handoff. Whoever
// applies or checkpoints owns the backend (backend_busy_) meanwhile, so
// applies never overlap each other or a checkpoint; the owner runs the
// callback of what it applied before giving the backend up, which keeps
// callbacks in seq order. With more than one transaction queued the
// journal's thread only wakes the apply thread (applying a whole batch there
// would hold up the next journal write). The apply thread checkpoints the
// backend periodically and when the journal fills (an inline apply only
// asks it to), then trims the journal.
//
// Back-pressure: above throttle_fill_pct of journal fill, each queue() sleeps
// in proportion to its bytes over the measured drain rate (bytes
// checkpointed per second), growing smoothly with the fill, so writers settle
// at the speed the backend absorbs instead of running into a full journal.
//
// Threading: every public method is thread-safe. Callbacks run on store
// threads (the apply thread or the journal plugin's thread) and must not
// block: no close(), submit(), drain() or checkpoint_now() from a callback.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <array>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "host/plugin_loader.h"
#include "store/plugin_instances.h"
#include "store/staged_write.h"
#include "store/store_space.h"
#include "store/store_meta.h"
#include "store/transaction.h"

namespace strata::store {

struct StoreSettings {
  int64_t checkpoint_interval_ms = 2000;
  int64_t checkpoint_fill_pct = 40;
  int64_t throttle_fill_pct = 50;
  uint64_t stage_threshold = 128 * 1024;  // 0 = never stage
  // Percent of the filesystem kept free for the store itself (store_space.h).
  int64_t reserve_pct = 2;
};

struct MkfsParams {
  std::string dir;
  std::string backend;
  std::string journal;       // plugin name or "none"
  // "" = default for the journal kind; relative = relative to dir.
  std::string journal_path;
  uint64_t journal_size = 1ull << 30;
  bool force = false;  // erase what dir holds (mkfs refuses a non-empty dir)
  OptionList backend_options;  // validated; defaults filled by mkfs
  OptionList journal_options;
};

// What an open with discard_after (`strata store fsck --repair
// --discard-after SEQ`) dropped.
struct RepairReport {
  bool requested = false;
  uint64_t discard_after = 0;
  uint64_t lost = 0;                      // transactions dropped
  uint64_t first_lost = 0, last_lost = 0;  // their seqs (0 when none)
  // A copy of the journal as it was before the repair, holding what was
  // dropped; "" when nothing was dropped.
  std::string saved_copy;
};

struct ReplayReport {
  uint64_t committed_seq = 0;  // backend checkpoint the replay started from
  uint64_t records = 0;        // transactions re-applied
  uint64_t last_seq = 0;
  uint64_t torn_bytes = 0;
  std::string detail;  // the journal's note on what it discarded or skipped
  RepairReport repair;
};

struct StoreStats {
  uint64_t submitted_seq = 0, applied_seq = 0, committed_seq = 0;
  uint64_t checkpoints = 0;
  uint64_t throttle_sleeps = 0;
  double throttle_seconds = 0;
  double drain_bytes_per_sec = 0;
  uint64_t staged_writes = 0;
  // Transactions applied on the journal's thread (the depth-1 fast path).
  uint64_t inline_applies = 0;
  strata_journal_stat journal{};
  bool has_journal = false;
  // Backend checksum failures since open (STRATA_OS_CTL_CHECKSUM_FAILURES);
  // none when the backend keeps no checksums or predates ABI 1.3.
  std::optional<uint64_t> checksum_failures;
};

class Store {
 public:
  using Callback = std::function<void(const Status &)>;
  // When a queued transaction's callback runs (see the top of this file).
  enum class Ack { kApplied, kDurable };
  using KvList = std::vector<std::pair<std::string, std::string>>;

  static Status mkfs(const host::PluginRegistry &reg, const MkfsParams &p, Logger &log);
  // Opens and replays. Fails if the journal is corrupt before its tail, if
  // another process has the store open, or if a plugin is missing.
  static Result<std::unique_ptr<Store>> open(const host::PluginRegistry &reg,
                                             const std::string &dir, const StoreSettings &s,
                                             Logger &log);
  // Opens a store whose journal cannot be replayed (corrupt before its
  // tail), giving up every transaction after `discard_after`: applies the
  // journal up to it, checkpoints, keeps a copy of the journal in the store
  // directory, and starts a new, empty journal. Refuses a discard_after
  // below the backend's checkpoint or past the first record it cannot read.
  static Result<std::unique_ptr<Store>> open_discarding_after(const host::PluginRegistry &reg,
                                                              const std::string &dir,
                                                              const StoreSettings &s,
                                                              uint64_t discard_after,
                                                              Logger &log);
  // Moves the journal of a closed store to new media: opens the store
  // (replaying), checkpoints, creates the new journal, re-points the store
  // identity file at it, removes the old one.
  static Status journal_swap(const host::PluginRegistry &reg, const std::string &dir,
                             const std::string &journal, const std::string &journal_path,
                             uint64_t journal_size, const OptionList &journal_options,
                             Logger &log);

  ~Store();
  // Waits for every queued transaction, checkpoints, trims, closes plugins.
  Status close();

  // Whether queue() would stage a WRITE_FULL of `len` bytes (the backend has
  // staged writes and len reaches stage_threshold).
  bool would_stage(uint64_t len) const;
  // Makes `data` durable in the backend's stage area now, from any thread
  // and concurrently with everything else, for a later transaction to bind
  // (see staged_write.h). Fails with EOPNOTSUPP when the backend has no
  // staged writes.
  Result<StagedWriteRef> stage(std::string_view data);

  // Queues t. On success cb runs exactly once, when t is durable and
  // visible (or with an error if the store failed). On a rejected
  // transaction (bad collection, store failed or closing) returns the error
  // and never calls cb.
  // With Ack::kDurable, cb runs once t is durable (reads of its objects wait
  // for the apply); a store failure after that does not call it again.
  Status queue(Transaction t, Callback cb, Ack when = Ack::kApplied);
  // queue() and wait.
  Status submit(Transaction t);
  // Waits until everything queued so far has completed.
  void drain();
  Status checkpoint_now();

  // Reads never see part of a transaction: the apply thread holds the
  // object's lock stripe exclusively while it applies, a read holds it shared
  // across stat and data. A read sees every transaction whose callback ran
  // before the read began, and possibly later ones (never waits for them, so
  // reading from a callback is safe).
  Result<std::string> read(std::string_view coll, std::string_view oid, uint64_t off = 0,
                           uint64_t len = UINT64_MAX);
  Result<strata_object_stat> stat(std::string_view coll, std::string_view oid);
  Result<std::string> getxattr(std::string_view coll, std::string_view oid, std::string_view name);
  Result<KvList> getxattrs(std::string_view coll, std::string_view oid);
  Result<std::string> omap_get_header(std::string_view coll, std::string_view oid);
  Result<std::string> omap_get(std::string_view coll, std::string_view oid, std::string_view key);
  Result<KvList> omap_list(std::string_view coll, std::string_view oid,
                           std::string_view start_after = {}, std::string_view end = {},
                           uint64_t limit = 0);
  Result<std::vector<std::string>> list_objects(std::string_view coll,
                                                std::string_view start_after = {},
                                                uint64_t limit = 0);
  Result<std::vector<std::string>> list_collections();
  Result<strata_store_usage> usage();
  // The filesystem under the store as fullness sees it: statvfs, plus the
  // bytes being staged right now (not on disk yet, but promised).
  Result<StoreSpace> space() const;
  // Data bytes of every transaction queued since open: how much may have
  // been promised since an earlier space() (a cached fullness check
  // looks again once this has grown enough).
  uint64_t queued_data_bytes() const { return queued_data_bytes_.load(std::memory_order_relaxed); }
  // Backend fsck; problems are logged. Returns the number found.
  Result<int64_t> fsck();

  const StoreMeta &meta() const { return meta_; }
  const ReplayReport &replay_report() const { return replay_; }
  uint64_t backend_caps() const { return backend_->caps(); }
  uint64_t journal_caps() const { return journal_ ? journal_->caps() : 0; }
  // e.g. the volatile-journal warning; empty when healthy.
  std::vector<std::string> health_warnings() const;
  StoreStats stats();

 private:
  struct InFlight;
  Store(Logger &log) : log_(log) {}

  Status open_impl(const host::PluginRegistry &reg, const std::string &dir,
                   const StoreSettings &s);
  Status replay();
  // A journal that lost records the backend never applied: its oldest
  // record (or, empty, the newest it ever held) is past committed + 1.
  Status check_no_gap(uint64_t committed, uint64_t first_replayed) const;
  // The repair step of open_discarding_after once replay applied up to
  // discard_after: copy the journal aside, create a new one.
  Status replace_damaged_journal(uint64_t newest_seq);
  Status apply_one(InFlight &f);
  // REQUIRES: the caller owns the backend (or no other thread runs).
  Status checkpoint_locked_out(uint64_t seq);
  void apply_loop();
  // The backend owner's steps around applying f: apply under the object
  // stripes (on failure the store fails, which completes f, the backend is
  // given up, and it returns false), then record f as applied (returns
  // whether its callback is due now, marking it completed), then whether a
  // checkpoint is due.
  bool apply_striped(InFlight &f);
  bool mark_applied(InFlight &f);
  bool checkpoint_due(const InFlight &f);
  // The journal's callback applying f itself (see the top of this file).
  // REQUIRES: f was popped from queue_ and backend_busy_ set by the caller.
  void apply_inline(const std::shared_ptr<InFlight> &f);
  bool can_apply_inline_locked(const InFlight &f) const;  // REQUIRES: mu_
  bool apply_thread_has_work_locked() const;              // REQUIRES: mu_
  // Runs f's callback, then retires f; with release_backend also gives up
  // the backend in the same critical section (so drain() never returns
  // while the backend is still owned by a finished apply).
  void complete(const std::shared_ptr<InFlight> &f, const Status &st,
                bool release_backend = false);
  void release_backend();
  static void on_journal_durable(void *arg, int rc) noexcept;
  void throttle(uint64_t bytes);
  Status prepare(Transaction &t, std::vector<std::string> &touched_objs,
                 std::vector<std::string> &touched_colls);
  Status stage_large_writes(Transaction &t);
  // Claims `len` bytes for a stage about to be written, or ENOSPC (naming
  // `what`) if they would eat into the reserve. Claims are dropped with
  // unclaim_stage_space once the stage is on disk (or failed).
  Status claim_stage_space(uint64_t len, const std::string &what);
  void unclaim_stage_space(uint64_t len) { staging_bytes_ -= len; }
  std::shared_ptr<StageReleaser> releaser_ = std::make_shared<StageReleaser>();
  // An in-flight object's size as later transactions must see it. A plain
  // write to an object nobody tracks records only the end it reaches
  // (exact = false): most writes (a new file's first object) never need
  // more, and finding the rest costs a backend stat on every replica.
  struct TrackedSize {
    uint64_t bytes = 0;
    bool exact = true;
  };
  uint64_t tracked_size(std::string_view coll, std::string_view oid);
  uint64_t backend_size(std::string_view coll, std::string_view oid);
  // Read lock on one object's stripe; the apply thread takes the stripes of
  // a transaction's objects exclusively (all of them for collection ops).
  // First waits until the object has no acknowledged, unapplied transaction.
  std::shared_lock<std::shared_mutex> read_lock(std::string_view coll, std::string_view oid);
  // Waits until no object of coll has an acknowledged, unapplied transaction.
  void wait_collection_applied(std::string_view coll);
  std::vector<size_t> stripes_of(const InFlight &f) const;
  Result<strata_object_stat> stat_unlocked(std::string_view coll, std::string_view oid);
  void fail(const Status &st);
  Status failed_status() const;

  Logger &log_;
  std::string dir_;
  StoreMeta meta_;
  StoreSettings settings_;
  std::unique_ptr<BackendInstance> backend_;
  std::unique_ptr<JournalInstance> journal_;
  std::optional<host::Plugin> journal_plugin_;
  std::optional<uint64_t> discard_after_;  // open_discarding_after
  int lock_fd_ = -1;
  bool parallel_apply_ = false;  // ROLLBACK_CHECKPOINT backends
  bool exact_replay_ = false;
  ReplayReport replay_;

  // Submission: serialises seq assignment and journal append order.
  std::mutex submit_mu_;
  uint64_t next_seq_ = 1;                    // GUARDED_BY(submit_mu_)
  std::atomic<uint64_t> submitted_seq_{0};   // for stats() without the submit lock
  std::set<std::string> collections_;        // as of the last submitted txn; GUARDED_BY(submit_mu_)
  std::map<std::string, TrackedSize> sizes_;  // in-flight objects; GUARDED_BY(submit_mu_)
  // Collections removed by a transaction not yet applied, with its seq:
  // their untracked objects count as missing. GUARDED_BY(submit_mu_)
  std::map<std::string, uint64_t, std::less<>> removed_colls_;

  // Apply queue and in-flight accounting.
  mutable std::mutex mu_;
  std::condition_variable cv_;        // apply thread: work or stop
  std::condition_variable done_cv_;   // readers and drain(): progress
  std::deque<std::shared_ptr<InFlight>> queue_;    // GUARDED_BY(mu_), seq order
  std::map<std::string, int> pending_objects_;     // GUARDED_BY(mu_)
  // Objects of transactions acknowledged early (Ack::kDurable) and not yet
  // applied: reads of them wait. GUARDED_BY(mu_)
  std::map<std::string, int, std::less<>> acked_unapplied_;
  std::map<uint64_t, std::shared_ptr<InFlight>> live_;  // not yet completed; GUARDED_BY(mu_)
  uint64_t in_flight_ = 0;                         // GUARDED_BY(mu_)
  uint64_t applied_seq_ = 0, committed_seq_ = 0;   // GUARDED_BY(mu_)
  bool stopping_ = false;
  bool checkpoint_requested_ = false;
  // Someone applies or checkpoints right now (the apply thread or an inline
  // apply on the journal's thread). GUARDED_BY(mu_)
  bool backend_busy_ = false;
  uint64_t inline_applies_ = 0;  // GUARDED_BY(mu_)
  Status failed_;                                   // GUARDED_BY(mu_)
  std::thread apply_thread_;
  static constexpr size_t kStripes = 64;
  mutable std::array<std::shared_mutex, kStripes> stripes_;

  // Checkpoint and throttle bookkeeping: written by the backend's owner
  // only (backend_busy_ hands it over under mu_), others read the atomics.
  std::chrono::steady_clock::time_point last_checkpoint_;
  uint64_t bytes_since_checkpoint_ = 0;
  // Time spent applying and checkpointing since the last checkpoint: the
  // drain rate is bytes over busy time, so idle periods do not drag it down.
  std::chrono::nanoseconds busy_since_checkpoint_{0};
  std::atomic<double> drain_rate_{64.0 * 1024 * 1024};
  std::atomic<uint64_t> checkpoints_{0}, throttle_sleeps_{0}, staged_writes_{0};
  std::atomic<uint64_t> throttle_ns_{0};
  std::atomic<uint64_t> staging_bytes_{0};  // claimed by stages being written
  std::atomic<uint64_t> queued_data_bytes_{0};
  bool closed_ = false;
};

// The default journal path for a journal plugin of that name, as the
// identity file records it: relative to the store directory where it can
// be (so that a copied store uses its copy), absolute for tmpfs.
std::string default_journal_path(const std::string &journal, const std::string &fsid);

}  // namespace strata::store
