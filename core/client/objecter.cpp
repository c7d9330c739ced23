#include "client/objecter.h"

#include <algorithm>
#include <set>

#include "client/op_codec.h"
#include "msg/message_types.h"

namespace strata::client {

namespace {

using Clock = std::chrono::steady_clock;

thread_local int tl_callback_depth = 0;

// Marks the current thread as running user completions.
struct CallbackScope {
  CallbackScope() { ++tl_callback_depth; }
  ~CallbackScope() { --tl_callback_depth; }
};

std::string pg_name(uint32_t pool, uint32_t seed) {
  char b[32];
  std::snprintf(b, sizeof b, "%u.%x", pool, seed);
  return b;
}

}  // namespace

bool in_completion_callback() { return tl_callback_depth > 0; }

struct Objecter::Request {
  using Kind = RequestKind;
  Kind kind = Kind::kOp;
  uint64_t tid = 0;
  uint32_t pool = 0;
  std::string oid;    // kOp
  uint32_t seed = 0;  // fixed for PG requests, computed for ops
  ObjectOperation op;
  std::string start_after;  // kPgList
  uint32_t limit = 0;
  bool deep = false, repair = false;  // kPgCommand
  OpDone op_done;
  PgListDone list_done;
  PgCommandDone cmd_done;
  Clock::time_point deadline = Clock::time_point::max();

  // Routing state, under Objecter::mu_.
  int32_t osd = -1;          // primary it was routed to; -1: none up
  msg::ConnectionRef conn;   // sent on; null: waits for a connection or a map
  uint64_t epoch = 0;        // of the map it was routed with
  uint64_t min_epoch = 0;    // an OSD asked for this map first (retryEpoch)
  // An OSD said "retry" for a map this request already had: it is not
  // ready for the PG yet. Sent again at resend_at (tick), with back-off.
  Clock::time_point resend_at{};
  uint32_t same_epoch_retries = 0;

  // Encoding may read the caller's buffers (borrowed data), which are only
  // guaranteed until completion: encode and complete exclude each other.
  std::mutex mu;
  bool done = false;
  uint32_t sends = 0;

  std::string what() const {
    switch (kind) {
      case Kind::kOp: return "op tid " + std::to_string(tid) + " on " + oid + " (pg " +
                             pg_name(pool, seed) + ")";
      case Kind::kPgList: return "pg list " + pg_name(pool, seed);
      case Kind::kPgCommand: return "pg command " + pg_name(pool, seed);
    }
    return "request";
  }
};

Objecter::Objecter(msg::Messenger &messenger, MapHolder &maps, Background &bg, Logger &log,
                   Options opts)
    : messenger_(messenger), maps_(maps), bg_(bg), log_(log), opts_(std::move(opts)) {}

Objecter::~Objecter() { shutdown(); }

Status Objecter::submit(uint32_t pool, std::string oid, ObjectOperation op, OpDone done) {
  if (!op.error().ok()) return op.error().Context("object " + oid);
  if (op.empty()) return Status::Error(EINVAL, "object " + oid + ": operation has no steps");
  if (oid.empty() || oid.size() > 4096 || oid.find('\0') != std::string::npos)
    return Status::Error(EINVAL, "bad object name (1..4096 bytes, no NUL)");
  auto r = std::make_shared<Request>();
  r->kind = Request::Kind::kOp;
  r->pool = pool;
  r->oid = std::move(oid);
  r->op = std::move(op);
  r->op_done = std::move(done);
  return start(std::move(r));
}

Status Objecter::pg_list(uint32_t pool, uint32_t seed, std::string start_after, uint32_t limit,
                         PgListDone done) {
  auto r = std::make_shared<Request>();
  r->kind = Request::Kind::kPgList;
  r->pool = pool;
  r->seed = seed;
  r->start_after = std::move(start_after);
  r->limit = limit;
  r->list_done = std::move(done);
  return start(std::move(r));
}

Status Objecter::pg_command(uint32_t pool, uint32_t seed, bool deep, bool repair,
                            PgCommandDone done) {
  auto r = std::make_shared<Request>();
  r->kind = Request::Kind::kPgCommand;
  r->pool = pool;
  r->seed = seed;
  r->deep = deep;
  r->repair = repair;
  r->cmd_done = std::move(done);
  return start(std::move(r));
}

Status Objecter::start(RequestRef r) {
  r->tid = next_tid_.fetch_add(1);
  if (opts_.op_timeout.count() > 0) r->deadline = Clock::now() + opts_.op_timeout;
  Actions a;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (shut_down_) return Status::Error(ESHUTDOWN, "the client is shut down");
    // Read the map under mu_: a rescan for a newer map then either sees
    // this request or runs after it was routed with that newer map.
    auto view = maps_.current();
    if (!view) return Status::Error(ENOTCONN, "no cluster map yet (not connected)");
    if (!view->map().pool(r->pool))
      return Status::Error(ENOENT, "pool " + std::to_string(r->pool) + " does not exist");
    inflight_.emplace(r->tid, r);
    route_locked(r, *view, a);
    // Failing here means it never started: report it instead of calling
    // the callback on the submitter's thread.
    for (const Failure &f : a.failures)
      if (f.req == r) {
        inflight_.erase(r->tid);
        return Status::Error(f.rc, r->what() + ": placement group does not exist");
      }
  }
  n_submitted_++;
  carry_out(a);
  return Status::OK();
}

Objecter::OsdSession &Objecter::session_locked(int32_t osd, const cluster::MapView &view,
                                               Actions &a) {
  const cluster::OsdInfo *info = view.map().osd(osd);
  std::string addr = info ? info->addr : "";
  uint64_t up_from = info ? info->up_from : 0;
  OsdSession &s = sessions_[osd];
  if (s.addr != addr || s.up_from != up_from) {
    // The OSD restarted or moved: whatever we had goes to the old process.
    if (s.conn) a.to_close.push_back(s.conn);
    s.conn = nullptr;
    s.addr = addr;
    s.up_from = up_from;
    s.connecting = false;
    s.generation++;
    s.failures = 0;
    s.next_attempt = {};
  }
  return s;
}

void Objecter::route_locked(const RequestRef &r, const cluster::MapView &view, Actions &a) {
  const cluster::PoolInfo *pool = view.map().pool(r->pool);
  if (!pool) {
    inflight_.erase(r->tid);
    a.failures.push_back({r, -ENOENT});
    return;
  }
  r->conn = nullptr;
  r->osd = -1;
  r->resend_at = {};
  r->epoch = view.epoch();
  if (r->min_epoch > view.epoch()) {
    a.want_epoch = std::max(a.want_epoch, r->min_epoch);
    return;
  }
  if (r->kind == Request::Kind::kOp) {
    r->seed = view.pg_of(r->pool, r->oid).seed;
  } else if (r->seed >= pool->pg_num) {
    inflight_.erase(r->tid);
    a.failures.push_back({r, -ENOENT});
    return;
  }
  int32_t primary = view.primary(placement::PgId{r->pool, r->seed});
  if (primary < 0) return;  // no OSD serves the PG now: wait for a map that has one
  r->osd = primary;
  OsdSession &s = session_locked(primary, view, a);
  if (s.conn) {
    r->conn = s.conn;
    a.sends.push_back(ticketed(r, s, view.epoch(), r->seed));
  } else {
    connect_locked(primary, s);
  }
}

void Objecter::connect_locked(int32_t osd, OsdSession &s) {
  if (s.connecting || shut_down_ || s.addr.empty()) return;
  if (Clock::now() < s.next_attempt) return;  // tick() tries again
  s.connecting = true;
  uint64_t gen = ++s.generation;
  std::string addr = s.addr;
  bg_.spawn([this, osd, gen, addr] {
    on_connected(osd, gen, messenger_.connect(addr, opts_.connect_timeout));
  });
}

void Objecter::on_connected(int32_t osd, uint64_t generation, Result<msg::ConnectionRef> conn) {
  Actions a;
  msg::ConnectionRef unwanted;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = sessions_.find(osd);
    if (shut_down_ || it == sessions_.end() || it->second.generation != generation) {
      if (conn.ok()) unwanted = *conn;
    } else {
      OsdSession &s = it->second;
      s.connecting = false;
      // Closed already (its on_close may have run before we adopted it):
      // count it as a failed attempt. Checked under mu_, so a close after
      // this point finds the session in handle_close.
      if (conn.ok() && !(*conn)->is_open())
        conn = Status::Error(ECONNRESET, "connection to osd." + std::to_string(osd) +
                                             " closed as it opened");
      if (!conn.ok() && conn.status().code() == -EACCES) {
        // Authentication refused: final, not a network hiccup. Retrying
        // would only repeat it, so every request waiting for this OSD fails
        // now with EACCES; a later request tries once more (the key may have
        // been restored meanwhile) and fails as fast if not.
        s.failures = 0;
        s.next_attempt = {};
        size_t n = 0;
        for (auto it = inflight_.begin(); it != inflight_.end();) {
          if (it->second->osd == osd && !it->second->conn) {
            a.failures.push_back({it->second, -EACCES});
            it = inflight_.erase(it);
            ++n;
          } else {
            ++it;
          }
        }
        std::string line = opts_.instance + ": osd." + std::to_string(osd) + " at " + s.addr +
                           " refused our authentication (" + conn.status().message() +
                           "); failing " + std::to_string(n) +
                           " request(s) with EACCES (was this client's key removed or "
                           "changed? see `strata auth ls`)";
        // Once per refusal streak: an application retrying on EACCES must
        // not fill the log.
        if (!s.refused) log_.error("client", line);
        else log_.debug("client", line);
        s.refused = true;
      } else if (!conn.ok()) {
        s.failures++;
        auto backoff = std::chrono::milliseconds(
            std::min<int64_t>(2000, 50LL << std::min(s.failures, 6)));
        s.next_attempt = Clock::now() + backoff;
        if (s.failures == 1 || s.failures % 20 == 0)
          log_.warn("client", "cannot connect to osd." + std::to_string(osd) + " at " + s.addr +
                                  ": " + conn.status().ToString() + " (attempt " +
                                  std::to_string(s.failures) + ", retrying)");
      } else {
        s.conn = *conn;
        s.turn = std::make_shared<Turnstile>();
        s.failures = 0;
        s.refused = false;
        uint64_t epoch = maps_.epoch();
        for (auto &[tid, r] : inflight_) {
          if (r->osd == osd && !r->conn && r->min_epoch <= epoch) {
            r->conn = s.conn;
            a.sends.push_back(ticketed(r, s, r->epoch, r->seed));
          }
        }
      }
    }
  }
  if (unwanted) unwanted->close("superseded connection attempt");
  carry_out(a);
}

void Objecter::handle_new_map() {
  bg_.post([this] { rescan(); });
}

void Objecter::rescan() {
  Actions a;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (shut_down_) return;
    auto view = maps_.current();
    if (!view) return;
    // Sessions to OSDs that are down, gone or restarted are of no more use.
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const cluster::OsdInfo *info = view->map().osd(it->first);
      bool stale = !info || !info->up || info->addr != it->second.addr ||
                   info->up_from != it->second.up_from;
      if (stale) {
        if (it->second.conn) a.to_close.push_back(it->second.conn);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<RequestRef> all;
    all.reserve(inflight_.size());
    for (auto &[tid, r] : inflight_) all.push_back(r);
    for (const RequestRef &r : all) {
      bool reroute = !r->conn;
      if (!reroute) {
        const cluster::PoolInfo *pool = view->map().pool(r->pool);
        if (!pool) {
          reroute = true;  // route_locked fails it
        } else {
          uint32_t seed = r->kind == Request::Kind::kOp ? view->pg_of(r->pool, r->oid).seed
                                                         : r->seed;
          int32_t primary = view->primary(placement::PgId{r->pool, seed});
          auto s = sessions_.find(primary);
          reroute = primary != r->osd || seed != r->seed || s == sessions_.end() ||
                    s->second.conn != r->conn;
        }
      }
      if (reroute) route_locked(r, *view, a);
    }
  }
  carry_out(a);
}

void Objecter::handle_close(const msg::ConnectionRef &c) {
  Actions a;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (shut_down_) return;
    bool ours = false;
    for (auto &[osd, s] : sessions_) {
      if (s.conn == c) {
        s.conn = nullptr;
        ours = true;
      }
    }
    auto view = maps_.current();
    if (!view) return;
    std::vector<RequestRef> affected;
    for (auto &[tid, r] : inflight_)
      if (r->conn == c) affected.push_back(r);
    if (!ours && affected.empty()) return;
    if (!affected.empty())
      log_.info("client", "connection to " + c->peer_entity() + " closed with " +
                              std::to_string(affected.size()) + " requests in flight; resending");
    // Same tids: the OSD recognises a write it already applied.
    for (const RequestRef &r : affected) route_locked(r, *view, a);
  }
  carry_out(a);
}

void Objecter::tick() {
  Actions a;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (shut_down_) return;
    auto view = maps_.current();
    if (!view) return;
    auto now = Clock::now();
    uint64_t want = 0;
    std::set<int32_t> waiting;
    std::vector<RequestRef> due;
    for (auto it = inflight_.begin(); it != inflight_.end();) {
      const RequestRef &r = it->second;
      if (r->deadline <= now) {
        log_.warn("client", r->what() + " timed out after " +
                                std::to_string(opts_.op_timeout.count()) + " ms");
        a.failures.push_back({r, -ETIMEDOUT});
        n_timed_out_++;
        it = inflight_.erase(it);
        continue;
      }
      if (!r->conn && r->resend_at != Clock::time_point{}) {
        if (r->resend_at <= now) due.push_back(r);
      } else if (!r->conn) {
        if (r->min_epoch > view->epoch()) want = std::max(want, r->min_epoch);
        else if (r->osd >= 0) waiting.insert(r->osd);
      }
      ++it;
    }
    for (const RequestRef &r : due) route_locked(r, *view, a);
    for (int32_t osd : waiting) {
      auto s = sessions_.find(osd);
      if (s == sessions_.end()) continue;
      if (s->second.conn) {
        // Connected meanwhile (a race with on_connected): send what waits.
        for (auto &[tid, r] : inflight_)
          if (r->osd == osd && !r->conn && r->min_epoch <= view->epoch() &&
              r->resend_at == Clock::time_point{}) {
            r->conn = s->second.conn;
            a.sends.push_back(ticketed(r, s->second, r->epoch, r->seed));
          }
      } else {
        connect_locked(osd, s->second);
      }
    }
    // Requests waiting for a map the monitor has not pushed yet: ask again,
    // at most once a second.
    if (want > 0 && now - last_nudge_ > std::chrono::seconds(1)) {
      last_nudge_ = now;
      a.want_epoch = want;
    }
  }
  carry_out(a);
}

void Objecter::carry_out(Actions &a) {
  for (const auto &c : a.to_close) c->close("cluster map changed");
  for (const Failure &f : a.failures) fail(f.req, f.rc);
  for (const Send &s : a.sends) send(s);
  if (a.want_epoch > 0 && map_wanted_) map_wanted_(a.want_epoch);
}

Objecter::Send Objecter::ticketed(const RequestRef &r, OsdSession &s, uint64_t epoch,
                                  uint32_t seed) {
  if (!s.turn) s.turn = std::make_shared<Turnstile>();
  return Send{r, s.conn, epoch, seed, s.turn, s.turn->next_ticket++};
}

void Objecter::Turnstile::wait(uint64_t ticket) {
  std::unique_lock lk(mu);
  cv.wait(lk, [&] { return serving == ticket; });
}

void Objecter::Turnstile::advance() {
  {
    std::lock_guard lk(mu);
    ++serving;
  }
  cv.notify_all();
}

void Objecter::send(const Send &s) {
  Request &r = *s.req;
  msg::Message m;
  // Encoded in parallel; handed to the connection in ticket order. Every
  // ticket passes the turnstile exactly once, sent or not (also when
  // encoding throws), and never while r.mu is held: a resend of the same
  // request may hold an earlier ticket and need r.mu.
  struct Turn {
    Turnstile *t;
    uint64_t ticket;
    bool held = false, passed = false;
    void take() {
      if (t && !held) t->wait(ticket);
      held = true;
    }
    void pass() {
      take();
      if (t && !passed) t->advance();
      passed = true;
    }
    ~Turn() { pass(); }
  } turn{s.turn.get(), s.ticket};
  {
    std::lock_guard<std::mutex> g(r.mu);
    if (r.done) return;  // ~Turn passes the ticket, after r.mu is released
    switch (r.kind) {
      case Request::Kind::kOp: {
        OpRequestHeader h;
        h.tid = r.tid;
        h.client = opts_.instance;
        h.pool = r.pool;
        h.seed = s.seed;
        h.oid = r.oid;
        h.map_epoch = s.epoch;
        m = encode_op_request(h, r.op);
        break;
      }
      case Request::Kind::kPgList:
        m = encode_pg_list(r.tid, r.pool, s.seed, r.start_after, r.limit, s.epoch);
        break;
      case Request::Kind::kPgCommand:
        m = encode_pg_command(r.tid, r.pool, s.seed, r.deep, r.repair, s.epoch);
        break;
    }
    if (r.sends++ > 0) n_resends_++;
  }
  n_sends_++;
  // A closed connection drops the message; its on_close re-routes the
  // request. An open one refusing it means the message itself is too big
  // for the messenger: sending it again would never work.
  turn.take();
  bool refused = !s.conn->send(std::move(m)) && s.conn->is_open();
  turn.pass();
  if (refused) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!inflight_.erase(r.tid)) return;
    }
    log_.error("client", r.what() + ": the messenger refused the request (too large?)");
    fail(s.req, -EMSGSIZE);
  }
}

void Objecter::fail(const RequestRef &r, int rc) {
  {
    std::lock_guard<std::mutex> g(r->mu);
    if (r->done) return;
    r->done = true;
  }
  n_completed_++;
  CallbackScope scope;
  switch (r->kind) {
    case Request::Kind::kOp:
      r->op.fail_handlers(rc);
      if (r->op_done) r->op_done(OpOutcome{rc, 0, false});
      break;
    case Request::Kind::kPgList:
      if (r->list_done) r->list_done(PgListOutcome{rc, {}, false});
      break;
    case Request::Kind::kPgCommand:
      if (r->cmd_done) {
        PgCommandOutcome o;
        o.rc = rc;
        r->cmd_done(std::move(o));
      }
      break;
  }
}

Objecter::RequestRef Objecter::take_for_reply(const msg::ConnectionRef &c, uint64_t tid,
                                              uint64_t retry_epoch) {
  Actions a;
  RequestRef out;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = inflight_.find(tid);
    if (it == inflight_.end()) return nullptr;  // answered already (a resend's twin)
    RequestRef r = it->second;
    if (retry_epoch == 0) {
      inflight_.erase(it);
      out = r;
    } else {
      n_retry_++;
      if (r->conn != c) return nullptr;  // re-routed since; this answer is stale
      if (retry_epoch <= r->epoch) {
        // The OSD has our map but is not ready to serve the PG. Waiting
        // for a newer map alone could wait forever in a quiet cluster, and
        // resending at once would spin: send again after a back-off (and
        // sooner if a newer map comes).
        auto delay = std::chrono::milliseconds(50LL << std::min<uint32_t>(r->same_epoch_retries, 5));
        r->same_epoch_retries++;
        log_.warn("client", r->what() + ": " + c->peer_entity() + " asked for epoch " +
                                std::to_string(retry_epoch) + ", which it was sent with; sending again in " +
                                std::to_string(delay.count()) + " ms");
        r->conn = nullptr;
        r->resend_at = Clock::now() + delay;
        r->min_epoch = std::max(r->min_epoch, r->epoch);
      } else {
        r->min_epoch = std::max(r->min_epoch, retry_epoch);
        auto view = maps_.current();
        if (view) route_locked(r, *view, a);
      }
    }
  }
  carry_out(a);
  return out;
}

Objecter::RequestRef Objecter::claim_reply(const msg::ConnectionRef &c, uint64_t tid,
                                           uint64_t retry_epoch, RequestKind kind,
                                           const char *reply_name) {
  RequestRef r = take_for_reply(c, tid, retry_epoch);
  if (!r) return nullptr;
  if (r->kind != kind) {
    log_.warn("client", r->what() + ": answered with a " + reply_name + " by " + c->peer_entity());
    fail(r, -EIO);
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> g(r->mu);
    if (r->done) return nullptr;
    r->done = true;
  }
  n_completed_++;
  return r;
}

bool Objecter::handle_message(const msg::ConnectionRef &c, const msg::Message &m) {
  switch (m.type) {
    case msg::kMsgOpReply: handle_op_reply(c, m); return true;
    case msg::kMsgPgListReply: handle_pg_list_reply(c, m); return true;
    case msg::kMsgPgCommandReply: handle_pg_command_reply(c, m); return true;
    default: return false;
  }
}

void Objecter::handle_op_reply(const msg::ConnectionRef &c, const msg::Message &m) {
  auto parsed = OpReplyView::parse(m);
  if (!parsed.ok()) {
    // Its request stays in flight; closing makes it go again.
    c->close("bad OpReply: " + parsed.status().ToString());
    return;
  }
  const OpReplyView &v = *parsed;
  RequestRef r = claim_reply(c, v.tid, v.retry_epoch, Request::Kind::kOp, "OpReply");
  if (!r) return;
  CallbackScope scope;
  // One result per step that ran, in order; the failing step (if any) is
  // the last one that ran.
  const auto &steps = r->op.steps();
  bool failure_reported = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i < v.results.size()) {
      if (v.results[i].rc < 0) failure_reported = true;
      if (steps[i].handler) steps[i].handler(v.results[i]);
      continue;
    }
    StepResult missing;
    if (v.rc < 0) {
      missing.rc = failure_reported ? -ECANCELED : v.rc;
      failure_reported = true;
    } else {
      missing.rc = -EIO;  // success without a result for this step
    }
    if (steps[i].handler) steps[i].handler(missing);
  }
  if (r->op_done) r->op_done(OpOutcome{v.rc, v.version, v.replayed, v.message});
}

void Objecter::handle_pg_list_reply(const msg::ConnectionRef &c, const msg::Message &m) {
  auto d = decode_pg_list_reply(m);
  if (!d.ok()) {
    c->close("bad PgListReply: " + d.status().ToString());
    return;
  }
  RequestRef r = claim_reply(c, d->tid, d->retry_epoch, Request::Kind::kPgList, "PgListReply");
  if (!r) return;
  CallbackScope scope;
  if (r->list_done) r->list_done(PgListOutcome{d->rc, std::move(d->names), d->more});
}

void Objecter::handle_pg_command_reply(const msg::ConnectionRef &c, const msg::Message &m) {
  auto d = decode_pg_command_reply(m);
  if (!d.ok()) {
    c->close("bad PgCommandReply: " + d.status().ToString());
    return;
  }
  RequestRef r =
      claim_reply(c, d->tid, d->retry_epoch, Request::Kind::kPgCommand, "PgCommandReply");
  if (!r) return;
  CallbackScope scope;
  if (r->cmd_done) {
    PgCommandOutcome o;
    o.rc = d->rc;
    o.message = std::move(d->message);
    o.json = std::move(d->json);
    r->cmd_done(std::move(o));
  }
}

void Objecter::shutdown() {
  std::vector<RequestRef> all;
  std::vector<msg::ConnectionRef> conns;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    for (auto &[tid, r] : inflight_) all.push_back(r);
    inflight_.clear();
    for (auto &[osd, s] : sessions_)
      if (s.conn) conns.push_back(s.conn);
    sessions_.clear();
  }
  for (const RequestRef &r : all) fail(r, -ESHUTDOWN);
  for (const auto &c : conns) c->close("client shutdown");
}

ObjecterStats Objecter::stats() const {
  ObjecterStats s;
  s.submitted = n_submitted_;
  s.sends = n_sends_;
  s.resends = n_resends_;
  s.retry_replies = n_retry_;
  s.completed = n_completed_;
  s.timed_out = n_timed_out_;
  return s;
}

size_t Objecter::inflight() const {
  std::lock_guard<std::mutex> g(mu_);
  return inflight_.size();
}

}  // namespace strata::client
