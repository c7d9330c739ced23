// The Objecter: sends each request to the primary OSD of its placement
// group and sees it through to one completion, whatever the cluster does in
// between.
//
// A request gets a tid (unique for this client instance) when submitted and
// keeps it for life. It is (re)sent, with that same tid, when
//   - the cluster map changes its PG's primary (or the primary restarted),
//   - the connection it was sent on breaks (reconnect, then resend),
//   - the OSD answers retryEpoch (wait for that map, then resend),
// and the OSDs deduplicate writes by (client instance, tid) in the PG log,
// so a resent write is applied once. A PG with no OSD up waits for a map
// that gives it one. An OSD that refuses to authenticate this client (its
// key was removed or changed) fails the requests for it at once with
// -EACCES instead of retrying. Requests to a pool that disappears fail with -ENOENT;
// with client_op_timeout_ms set, requests older than that fail -ETIMEDOUT.
//
// Threading: submit() may be called from any thread and sends from the
// caller's thread when a connection to the primary exists (no hand-off on
// the fast path). Replies are processed on the messenger's thread, which
// completes the request directly: step handlers and the done callback run
// there and must not block. Map changes, reconnects and timeouts run on the
// Background worker.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/background.h"
#include "client/map_holder.h"
#include "client/object_operation.h"
#include "common/log.h"
#include "common/status.h"
#include "msg/messenger.h"

namespace strata::client {

struct OpOutcome {
  int rc = 0;
  uint64_t version = 0;  // object version after the write / as read
  bool replayed = false; // a resent write the OSD found already applied
  std::string message = {};  // the OSD's context for an error, if it gave one
};
using OpDone = std::function<void(const OpOutcome &)>;

struct PgListOutcome {
  int rc = 0;
  std::vector<std::string> names;
  bool more = false;
};
using PgListDone = std::function<void(PgListOutcome &&)>;

struct PgCommandOutcome {
  int rc = 0;
  std::string message;
  std::string json;
};
using PgCommandDone = std::function<void(PgCommandOutcome &&)>;

struct ObjecterStats {
  uint64_t submitted = 0;
  uint64_t sends = 0;         // every send, first ones included
  uint64_t resends = 0;       // sends after the first of a request
  uint64_t retry_replies = 0; // OpReply/PgListReply with retryEpoch
  uint64_t completed = 0;
  uint64_t timed_out = 0;
};

// True on a thread that is running a completion (step handler or done
// callback): synchronous calls there would wait for the very thread that
// has to deliver their reply.
bool in_completion_callback();

class Objecter {
 public:
  struct Options {
    std::string instance;  // "client.NAME.<hex>", sent with every request
    std::chrono::milliseconds op_timeout{0};
    std::chrono::milliseconds connect_timeout{3000};
  };

  Objecter(msg::Messenger &messenger, MapHolder &maps, Background &bg, Logger &log, Options opts);
  ~Objecter();
  Objecter(const Objecter &) = delete;
  Objecter &operator=(const Objecter &) = delete;

  // Starts `op` on `oid` in `pool`. When this returns an error (shut down,
  // no map yet, unknown pool, an argument error in op) nothing was started
  // and `done` is never called; otherwise `done` runs exactly once.
  Status submit(uint32_t pool, std::string oid, ObjectOperation op, OpDone done);
  // One page of a PG's object names (after start_after, at most limit).
  Status pg_list(uint32_t pool, uint32_t seed, std::string start_after, uint32_t limit,
                 PgListDone done);
  Status pg_command(uint32_t pool, uint32_t seed, bool deep, bool repair, PgCommandDone done);

  // Messenger hooks. handle_message returns false for a type it does not own.
  bool handle_message(const msg::ConnectionRef &c, const msg::Message &m);
  void handle_close(const msg::ConnectionRef &c);
  // The MapHolder has a newer map: re-examine every request (on the worker).
  void handle_new_map();
  // Periodic (Background tick): timeouts, reconnect back-off, map nudges.
  void tick();
  // Fails every request with -ESHUTDOWN and refuses new ones.
  void shutdown();

  // Called (outside locks) with an epoch some request waits for.
  void set_map_wanted(std::function<void(uint64_t)> fn) { map_wanted_ = std::move(fn); }

  ObjecterStats stats() const;
  size_t inflight() const;

 private:
  enum class RequestKind { kOp, kPgList, kPgCommand };
  struct Request;
  using RequestRef = std::shared_ptr<Request>;
  // Hands a session's messages to its connection in the order mu_ decided
  // them, although they are encoded and sent outside mu_ by several threads
  // (a submitter, the thread that finished connecting): ops to one object
  // must reach the OSD in submission order.
  struct Turnstile {
    std::mutex mu;
    std::condition_variable cv;
    uint64_t next_ticket = 0;  // GUARDED_BY(Objecter::mu_)
    uint64_t serving = 0;      // GUARDED_BY(mu)
    void wait(uint64_t ticket);
    void advance();
  };
  struct Send {
    RequestRef req;
    msg::ConnectionRef conn;
    uint64_t epoch;
    uint32_t seed;
    std::shared_ptr<Turnstile> turn;
    uint64_t ticket = 0;
  };
  struct Failure {
    RequestRef req;
    int rc;
  };
  struct OsdSession {
    std::string addr;
    uint64_t up_from = 0;
    msg::ConnectionRef conn;
    std::shared_ptr<Turnstile> turn;  // one per connection
    bool connecting = false;
    uint64_t generation = 0;  // bumps on every connect attempt
    int failures = 0;
    bool refused = false;  // the last attempt was refused authentication
    std::chrono::steady_clock::time_point next_attempt{};
  };
  // A Send with the next ticket of s's turnstile. REQUIRES: mu_ held.
  static Send ticketed(const RequestRef &r, OsdSession &s, uint64_t epoch, uint32_t seed);
  // What a locked section decided; carried out after the lock is released.
  struct Actions {
    std::vector<Send> sends;
    std::vector<Failure> failures;
    std::vector<msg::ConnectionRef> to_close;
    uint64_t want_epoch = 0;
  };

  Status start(RequestRef r);
  void route_locked(const RequestRef &r, const cluster::MapView &view, Actions &a);
  OsdSession &session_locked(int32_t osd, const cluster::MapView &view, Actions &a);
  void connect_locked(int32_t osd, OsdSession &s);
  void on_connected(int32_t osd, uint64_t generation, Result<msg::ConnectionRef> conn);
  void rescan();
  void carry_out(Actions &a);
  void send(const Send &s);
  void fail(const RequestRef &r, int rc);
  void handle_op_reply(const msg::ConnectionRef &c, const msg::Message &m);
  void handle_pg_list_reply(const msg::ConnectionRef &c, const msg::Message &m);
  void handle_pg_command_reply(const msg::ConnectionRef &c, const msg::Message &m);
  // Looks up tid; for a retry reply re-routes it and returns null, else
  // removes the request from the in-flight table and returns it.
  RequestRef take_for_reply(const msg::ConnectionRef &c, uint64_t tid, uint64_t retry_epoch);
  // take_for_reply, then: a request of another kind fails (-EIO); one that
  // completed already is ignored. Returns the request whose callback is
  // now due, or null.
  RequestRef claim_reply(const msg::ConnectionRef &c, uint64_t tid, uint64_t retry_epoch,
                         RequestKind kind, const char *reply_name);

  msg::Messenger &messenger_;
  MapHolder &maps_;
  Background &bg_;
  Logger &log_;
  const Options opts_;
  std::function<void(uint64_t)> map_wanted_;

  mutable std::mutex mu_;
  // By tid: resends after a connect or a map change go out in submission order.
  std::map<uint64_t, RequestRef> inflight_;
  std::map<int32_t, OsdSession> sessions_;
  bool shut_down_ = false;
  std::chrono::steady_clock::time_point last_nudge_{};

  std::atomic<uint64_t> next_tid_{1};
  std::atomic<uint64_t> n_submitted_{0}, n_sends_{0}, n_resends_{0}, n_retry_{0},
      n_completed_{0}, n_timed_out_{0};
};

}  // namespace strata::client
