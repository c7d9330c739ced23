// The metadata server's core: sessions, requests of sdk/proto/fs.capnp,
// leases, locks and the cache, over a MetaStore (docs/FILESYSTEM.md,
// "Sessions, leases, and why we are fast"). Transport-free: the daemon
// (mds_daemon.h) feeds it messages from its messenger; tests feed it
// through any ClientLink.
//
// Threading: handle(), link_closed() and tick() may be called from any
// thread; one mutex guards the state, and nothing under it waits for a
// client or for durability (requests that must wait for a lease to be
// released are queued and retried; replies are sent from the store's
// durability callbacks).
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
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/log.h"
#include "mds/lock_table.h"
#include "mds/meta_cache.h"
#include "mds/meta_store.h"
#include "msg/messenger.h"
#include "msg/peer_log_limiter.h"
#include "proto/fs.capnp.h"

namespace strata::mds {

// Where replies to one client connection go.
class ClientLink {
 public:
  virtual ~ClientLink() = default;
  virtual bool send(msg::Message m) = 0;
  virtual std::string peer() const = 0;
};
using LinkRef = std::shared_ptr<ClientLink>;

struct StatfsFigures {
  uint64_t total_bytes = 0, free_bytes = 0, avail_bytes = 0;
};

struct MdsServerOptions {
  std::string fs_name;
  int64_t metadata_pool = -1;
  int64_t data_pool = -1;
  uint64_t lease_ms = 30000;
  uint64_t cache_limit_bytes = 256u << 20;
  uint64_t max_file_size = 1ull << 40;
  // Inode numbers per range delegated to an asynchronous client (in its
  // Welcome, then refilled in replies): enough for a burst of creates
  // without a round trip, few enough that a dead client wastes little.
  uint64_t delegate_inos = 1024;
  // Files up to this size are kept inline (docs/FILESYSTEM.md, "Inline
  // data"): sessions that support it are told so in their Welcome (and
  // then ask for their new files to start inline). 0: no new inline
  // files (inline data already there is still served). At most
  // kInlineDataHardMax.
  uint64_t inline_max = 16384;
  std::chrono::milliseconds tick_interval{20};
  // Cluster usage for statfs; empty: zeros.
  std::function<StatfsFigures()> statfs;
  // Why the cluster takes no more data ("osd.1 is full"), or empty. While
  // it says so, requests that take space fail with ENOSPC: the MDS's own
  // writes pass the full flags (so that deletes go through), and without
  // this they would fill the OSDs to their failsafe ratio, where nothing,
  // deletes included, can be journaled any more. Empty function: never.
  std::function<std::string()> full;
  // Called (once, from any thread) when the store says a newer
  // incarnation took over: the server must stop at once.
  std::function<void(const Status &)> on_fenced;
};

struct MdsServerStats {
  uint32_t sessions = 0;
  uint64_t leases = 0;
  uint64_t cache_bytes = 0;
  uint64_t cache_limit_bytes = 0;
  uint64_t inodes = 0;  // cached items
  uint64_t journal_bytes = 0;
  uint64_t queued_requests = 0;
  uint64_t cache_evictions = 0;
  uint64_t requests = 0;  // received since start (each of a Batch's)
  uint64_t journal_writes = 0;
  uint64_t apply_writes = 0;
  uint64_t purged_objects = 0;
};

class MdsServer {
 public:
  MdsServer(MetaStore &store, MdsServerOptions opts, Logger &log);
  ~MdsServer();
  MdsServer(const MdsServer &) = delete;
  MdsServer &operator=(const MdsServer &) = delete;

  // Takes the filesystem over at `incarnation` (MetaStore::open) and
  // starts serving.
  Status start(uint64_t incarnation);
  // Waits for everything submitted to be durable and stops the timer.
  Status stop();

  void handle(const LinkRef &link, msg::Message &&m);
  void link_closed(const LinkRef &link);

  MdsServerStats stats() const;
  bool fenced() const { return fenced_.load(); }
  uint64_t incarnation() const { return incarnation_; }

 private:
  struct LeaseHeld {
    uint64_t session = 0;
    uint8_t kind = 0;  // fsproto::LeaseKind
    uint64_t seq = 0;
    uint64_t expires = 0;
    bool complete = false;
    bool listing = false;  // a readdir from the start ran under it
    bool revoking = false;
  };
  // Inode numbers delegated to a session for asynchronous creates.
  struct InoSpan {
    Ino first = 0;
    uint64_t count = 0;
    bool contains(Ino ino) const { return ino >= first && ino - first < count; }
  };
  struct Session {
    uint64_t id = 0;
    std::string client;
    LinkRef link;
    uint64_t committed_tid = 0;
    std::set<uint64_t> unsafe;                          // tids replied unsafe, not yet safe
    std::map<uint64_t, std::string> results;            // tid -> final Reply payload (dedup)
    std::vector<std::pair<uint64_t, uint64_t>> fsyncs;  // (fsync tid, wait below)
    size_t queued = 0;                                  // requests of it waiting in pending_
    bool async = false;                                 // its last Hello said supportsAsync
    bool inline_data = false;                           // its last Hello said supportsInline
    bool hurry_queued = false;  // an urgent Batch came while requests of it were queued
    // Ranges given to it, oldest first (a few: a late or replayed create may
    // still use an older one); the newest is the one its SessionRec names.
    std::deque<InoSpan> ranges;
    Ino used_high = 0;   // the highest number of the newest range used so far (0: none)
    std::set<Ino> used;  // delegated numbers used, within `ranges` (a second use is refused)
  };
  struct Pending {
    uint64_t session = 0;
    msg::Message m;
    bool batched = false;  // from a Batch: no unsafe reply
  };
  struct LockWaiter {
    uint64_t session = 0;
    uint64_t tid = 0;
    Ino ino = 0;
    FileLock lock;
  };
  struct LeaseOut {
    Ino ino = 0;
    uint8_t kind = 0;
    uint64_t seq = 0;
    uint64_t expires = 0;
    bool complete = false;
  };
  struct EntryOut {
    std::string name;
    InodeRec inode;
  };
  // What one request produced, before it becomes a Reply.
  struct Outcome {
    int result = 0;
    std::string message;
    std::optional<InodeRec> inode, parent, other_parent, replaced;
    std::vector<EntryOut> entries;
    bool end = false;
    std::vector<LeaseOut> leases;
    std::optional<StatfsFigures> statfs;
    uint64_t files = 0;
    std::optional<InoSpan> delegated;  // a refill for the session's delegated numbers
    std::optional<FileLock> lock;      // getlock: the conflicting one
    bool lock_none = false;            // getlock: no conflict
    bool mutated = false;              // `update` must be journaled
    bool deferred = false;             // answered later (waiting lock, fsync)
    bool cluster_full = false;         // said in the reply (Reply.clusterFull)
    bool batched = false;              // the client already answered it (a Batch's)
    MetaUpdate update;
    Outcome &fail(int err, std::string msg) {
      result = -err;
      message = std::move(msg);
      return *this;
    }
  };
  struct Loc {
    Ino parent = 0;
    std::string name;
  };
  // What a loaded inode is and where it lives.
  struct Loaded {
    InodeRec inode;
    bool table = false;
    Loc loc;  // primary dentries
    FileType dtype = FileType::kUnknown;
  };

  uint64_t now_ms() const;
  void tick_loop();
  void tick();

  void on_hello(const LinkRef &link, const msg::Message &m);
  // False: it still waits (only when from_queue).
  bool on_request(const LinkRef &link, msg::Message &&m, bool from_queue, bool batched);
  void reply_error(Session &s, uint64_t tid, int err, const std::string &message);
  void on_release(const LinkRef &link, const msg::Message &m);
  void on_batch(const LinkRef &link, const msg::Message &m);
  void end_session(uint64_t id, bool forget);
  Session *session_of(const LinkRef &link);
  void retry_pending();
  void retry_once();
  void send(Session &s, msg::Message m);
  void submit_update(MetaUpdate u);

  // Delegated inode numbers (asynchronous creates).
  InoSpan take_range(Session &s, MetaUpdate &u);
  SessionRec session_rec(const Session &s) const;
  bool may_use_ino(const Session &s, Ino ino, bool replay) const;
  bool refill_due(Session &s, Ino used);

  // Requests; return false when the request must wait for a Release.
  bool execute(Session &s, fsproto::Request::Reader req, Outcome &o);

  // Store access through the cache.
  Result<std::optional<DentryRec>> get_dentry(Ino dir, const std::string &name);
  Result<Loaded> load(Ino ino);
  Result<Loaded> resolve(Ino dir, const DentryRec &d);
  void put_inode(MetaUpdate &u, const Loaded &l);
  void set_dentry(MetaUpdate &u, Ino dir, const DentryRec &d);
  void remove_dentry(MetaUpdate &u, Ino dir, const std::string &name);
  void commit(Session &s, uint64_t tid, MetaUpdate u, std::string final_payload);
  bool dir_empty(Ino dir);
  void drop_link(MetaUpdate &u, Loaded &victim, Time now);
  void maybe_purge_stray(Ino ino);
  // A setattr's or release's effect on where a file's data is (maskInline,
  // and a size change of an inline file), applied to `in` after its new
  // size: {0, ""} or {errno, why} with `in` partly changed (drop it).
  std::pair<int, std::string> apply_data_attrs(InodeRec &in, fsproto::SetAttr::Reader a,
                                               bool session_inline) const;

  // Leases.
  bool clear_conflicts(uint64_t session, Ino ino, uint32_t kinds_mask);
  bool holds_file_lease(Ino ino) const;
  uint8_t dir_lease_kind(const Session &s, Ino dir) const;
  LeaseHeld &grant(uint64_t session, Ino ino, uint8_t kind);
  void drop_leases(uint64_t session, Ino ino, uint64_t seq, bool any_seq);

  MetaStore &store_;
  MdsServerOptions opts_;
  Logger &log_;
  // EIO answers (a metadata object could not be read or decoded) are the
  // operator's business: logged, one a second at most.
  msg::PeerLogLimiter eio_log_{std::chrono::seconds(1), 4};
  std::chrono::steady_clock::time_point epoch_;
  uint64_t incarnation_ = 0;
  std::atomic<bool> fenced_{false};

  mutable std::mutex mu_;
  uint64_t requests_served_ = 0;  // received, each of a Batch's too (stats)
  bool serving_ = false;
  Ino ino_next_ = kFirstUserIno;
  uint64_t next_session_ = 1;
  std::map<uint64_t, Session> sessions_;
  std::map<const ClientLink *, uint64_t> by_link_;
  std::deque<Pending> pending_;
  std::map<Ino, std::vector<LeaseHeld>> leases_;
  // When leases may run out: (expires, ino), pushed whenever a lease's
  // expiry is set, so tick() looks only at the inodes whose time came
  // (a scan of every lease each tick cost a fifth of the MDS's CPU in an
  // untar). Stale entries (the lease was renewed or dropped) find nothing.
  std::priority_queue<std::pair<uint64_t, Ino>, std::vector<std::pair<uint64_t, Ino>>,
                      std::greater<>>
      lease_expiry_;
  std::map<Ino, uint64_t> lease_seq_;
  std::unordered_map<Ino, Loc> where_;
  std::set<Ino> table_;
  std::set<Ino> strays_;
  // Files whose fileWrite lease ran out while its session was gone (a
  // client that died): it may have written data objects (a file moving
  // from inline to objects, or growing) it never reported, so their purge
  // removes object 0 even of an inline inode, and one object past the
  // known end of any other. Kept in memory only: after a restart `fs
  // check` finds what is left.
  std::set<Ino> unreported_writes_;
  // The purge of a file that lost its last link (none for an inline file
  // a live client wrote, whose objects do not exist).
  void purge_file(MetaUpdate &u, const InodeRec &in);
  LockTable locks_;
  std::vector<LockWaiter> lock_waiters_;
  MetaCache cache_;
  bool in_retry_ = false, retry_again_ = false;
  bool wake_ = false;  // a lock went: retry waiters once the current request is answered

  std::mutex tick_mu_;
  std::condition_variable tick_cv_;
  bool tick_stop_ = false;
  std::thread ticker_;
};

}  // namespace strata::mds
