// Sessions, dispatch, replies, leases and the timer of the MDS core.
// The requests themselves are in mds_requests.cpp.
#include "mds/mds_server.h"

#include <capnp/message.h>
#include <capnp/schema.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "mds/proto_convert.h"
#include "msg/wire_codec.h"

namespace strata::mds {

namespace {

constexpr size_t kResultsKept = 1024;  // completed replies kept per session for replays
// Delegated ranges remembered per session: a create may still use an older
// range than the newest (the client drains its queue of ranges in order).
constexpr size_t kRangesKept = 8;
// Requests in one Batch: beyond it the client misbehaves (its batches hold
// what one dirWrite lease produced between flushes).
constexpr size_t kBatchMax = 4096;
constexpr uint8_t kDirReadKind = static_cast<uint8_t>(fsproto::LeaseKind::DIR_READ);
constexpr uint8_t kDirWriteKind = static_cast<uint8_t>(fsproto::LeaseKind::DIR_WRITE);

uint32_t kind_bit(uint8_t kind) { return 1u << kind; }

}  // namespace

MdsServer::MdsServer(MetaStore &store, MdsServerOptions opts, Logger &log)
    : store_(store),
      opts_(std::move(opts)),
      log_(log),
      epoch_(std::chrono::steady_clock::now()),
      cache_(opts_.cache_limit_bytes) {}

MdsServer::~MdsServer() {
  {
    std::lock_guard lk(tick_mu_);
    tick_stop_ = true;
    tick_cv_.notify_all();
  }
  if (ticker_.joinable()) ticker_.join();
}

uint64_t MdsServer::now_ms() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - epoch_)
                                   .count()) +
         1;
}

Status MdsServer::start(uint64_t incarnation) {
  auto rs = store_.open(incarnation);
  if (!rs.ok())
    return rs.status().Context("mds: taking over at incarnation " + std::to_string(incarnation));
  {
    std::lock_guard lk(mu_);
    incarnation_ = incarnation;
    ino_next_ = std::max(rs->ino_next, kFirstUserIno);
    for (const SessionRec &r : rs->sessions) {
      Session s;
      s.id = r.id;
      s.client = r.client_name;
      s.committed_tid = r.committed_tid;
      // Its creates replayed from before the takeover may use this range.
      if (r.delegated_count) s.ranges.push_back(InoSpan{r.delegated_first, r.delegated_count});
      next_session_ = std::max(next_session_, r.id + 1);
      sessions_[r.id] = std::move(s);
    }
    // Sessions of different incarnations never share ids.
    next_session_ = std::max(next_session_, (incarnation << 20) + 1);
    table_.insert(kRootIno);
    serving_ = true;
  }
  ticker_ = std::thread([this] { tick_loop(); });
  log_.info("mds", "serving fs " + opts_.fs_name + " at incarnation " +
                       std::to_string(incarnation) + " (" + std::to_string(rs->sessions.size()) +
                       " sessions to resume, " + std::to_string(rs->replayed_entries) +
                       " journal entries replayed)");
  return Status::OK();
}

Status MdsServer::stop() {
  {
    std::lock_guard lk(tick_mu_);
    tick_stop_ = true;
    tick_cv_.notify_all();
  }
  if (ticker_.joinable()) ticker_.join();
  {
    std::lock_guard lk(mu_);
    serving_ = false;
  }
  if (fenced_) return Status::Error(ECANCELED, "mds: fenced by a newer incarnation");
  return store_.flush();
}

void MdsServer::tick_loop() {
  std::unique_lock lk(tick_mu_);
  while (!tick_stop_) {
    tick_cv_.wait_for(lk, opts_.tick_interval);
    if (tick_stop_) break;
    lk.unlock();
    tick();
    lk.lock();
  }
}

void MdsServer::tick() {
  std::lock_guard lk(mu_);
  uint64_t now = now_ms();
  bool changed = false;
  std::vector<Ino> lapsed_files;
  while (!lease_expiry_.empty() && lease_expiry_.top().first <= now) {
    const Ino ino = lease_expiry_.top().second;
    lease_expiry_.pop();
    auto it = leases_.find(ino);
    if (it == leases_.end()) continue;
    auto &v = it->second;
    size_t before = v.size();
    std::erase_if(v, [&](const LeaseHeld &l) {
      if (l.expires > now) return false;
      if (l.kind == static_cast<uint8_t>(fsproto::LeaseKind::FILE_WRITE)) {
        auto s = sessions_.find(l.session);
        if (s == sessions_.end() || !s->second.link) unreported_writes_.insert(ino);
      }
      return true;
    });
    if (v.size() != before) {
      changed = true;
      lapsed_files.push_back(ino);
    }
    if (v.empty()) leases_.erase(it);
  }
  for (Ino ino : lapsed_files) maybe_purge_stray(ino);
  if (changed) retry_pending();
}

MdsServerStats MdsServer::stats() const {
  std::lock_guard lk(mu_);
  MdsServerStats st;
  for (const auto &[id, s] : sessions_)
    if (s.link) st.sessions++;
  for (const auto &[ino, v] : leases_) st.leases += v.size();
  st.cache_bytes = cache_.bytes();
  st.cache_limit_bytes = cache_.limit();
  st.inodes = cache_.items();
  st.cache_evictions = cache_.evictions();
  MetaStoreStats ms = store_.stats();
  st.journal_bytes = ms.journal_bytes_unapplied;
  st.journal_writes = ms.journal_writes;
  st.apply_writes = ms.apply_writes;
  st.purged_objects = ms.purged_objects;
  st.requests = requests_served_;
  st.queued_requests = pending_.size();
  return st;
}

MdsServer::Session *MdsServer::session_of(const LinkRef &link) {
  auto it = by_link_.find(link.get());
  if (it == by_link_.end()) return nullptr;
  auto s = sessions_.find(it->second);
  return s == sessions_.end() ? nullptr : &s->second;
}

void MdsServer::send(Session &s, msg::Message m) {
  if (s.link) s.link->send(std::move(m));
}

// Journals a change nobody waits for; only fencing matters.
void MdsServer::submit_update(MetaUpdate u) {
  store_.submit(std::move(u), [this](Status st) {
    if (std::abs(st.code()) == ECANCELED && !fenced_.exchange(true) && opts_.on_fenced)
      opts_.on_fenced(st);
  });
}

// ---------------------------------------------------------------------------
// Delegated inode numbers

// A fresh range from the allocator; `u` journals the new high-water mark
// (the caller journals the session's record, which names the range) so
// that no later incarnation hands these numbers out again.
MdsServer::InoSpan MdsServer::take_range(Session &s, MetaUpdate &u) {
  InoSpan r{ino_next_, opts_.delegate_inos};
  ino_next_ += r.count;
  u.ino_next = ino_next_;
  s.ranges.push_back(r);
  s.used_high = 0;
  while (s.ranges.size() > kRangesKept) {
    const InoSpan old = s.ranges.front();
    std::erase_if(s.used, [&](Ino i) { return old.contains(i); });
    s.ranges.pop_front();
  }
  return r;
}

SessionRec MdsServer::session_rec(const Session &s) const {
  InoSpan cur = s.ranges.empty() ? InoSpan{} : s.ranges.back();
  return SessionRec{s.id, s.client, cur.first, cur.count, s.committed_tid};
}

// A client-chosen inode number: from a range this session was given, or a
// replay of a create that an earlier incarnation accepted (its number is
// below the journaled high-water mark, so nobody else was given it).
bool MdsServer::may_use_ino(const Session &s, Ino ino, bool replay) const {
  for (const InoSpan &r : s.ranges)
    if (r.contains(ino)) return true;
  return replay && ino >= kFirstUserIno && ino < ino_next_;
}

// Records that `used` was taken; true when the newest range is more than
// half used, so the reply should carry the next one. Only a number of the
// newest range counts, so one refill is outstanding at most.
bool MdsServer::refill_due(Session &s, Ino used) {
  if (!s.async || opts_.delegate_inos == 0 || s.ranges.empty()) return false;
  const InoSpan &cur = s.ranges.back();
  if (!cur.contains(used)) return false;
  s.used_high = std::max(s.used_high, used);
  uint64_t left = cur.first + cur.count - (s.used_high + 1);
  return left * 2 < cur.count;
}

void MdsServer::handle(const LinkRef &link, msg::Message &&m) {
  std::lock_guard lk(mu_);
  if (!serving_ || fenced_) return;
  switch (m.type) {
    case fsproto::MSG_HELLO:
      on_hello(link, m);
      break;
    case fsproto::MSG_REQUEST:
      on_request(link, std::move(m), false, false);
      break;
    case fsproto::MSG_RELEASE:
      on_release(link, m);
      break;
    case fsproto::MSG_BATCH:
      on_batch(link, m);
      break;
    case fsproto::MSG_GOODBYE:
      if (Session *s = session_of(link)) end_session(s->id, true);
      break;
    default:
      log_.warn("mds",
                "unexpected message type " + std::to_string(m.type) + " from " + link->peer());
  }
  if (wake_) {
    wake_ = false;
    retry_pending();
  }
}

void MdsServer::link_closed(const LinkRef &link) {
  std::lock_guard lk(mu_);
  Session *s = session_of(link);
  if (!s) return;
  // The session stays (the client may come back and resume it); its locks
  // go, its leases run out.
  end_session(s->id, false);
}

void MdsServer::end_session(uint64_t id, bool forget) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  Session &s = it->second;
  if (s.link) by_link_.erase(s.link.get());
  s.link.reset();
  std::erase_if(pending_, [&](const Pending &p) { return p.session == id; });
  s.queued = 0;
  std::erase_if(lock_waiters_, [&](const LockWaiter &w) { return w.session == id; });
  locks_.drop_session(id);
  if (forget) {
    std::vector<Ino> touched;
    for (auto &[ino, v] : leases_) {
      size_t before = v.size();
      std::erase_if(v, [&](const LeaseHeld &l) { return l.session == id; });
      if (v.size() != before) touched.push_back(ino);
    }
    std::erase_if(leases_, [](const auto &kv) { return kv.second.empty(); });
    for (Ino ino : touched) maybe_purge_stray(ino);
    MetaUpdate u;
    u.sessions.push_back(SessionChange{id, std::nullopt});
    store_.submit(std::move(u), [this](Status st) {
      if (std::abs(st.code()) == ECANCELED && !fenced_.exchange(true) && opts_.on_fenced)
        opts_.on_fenced(st);
    });
    sessions_.erase(it);
  }
  // Locks went: waiters of other sessions may go now.
  retry_pending();
}

void MdsServer::on_hello(const LinkRef &link, const msg::Message &m) {
  capnp::MallocMessageBuilder b;
  auto w = b.initRoot<fsproto::Welcome>();
  w.setIncarnation(incarnation_);
  w.setNowMs(now_ms());
  w.setLeaseMs(static_cast<uint32_t>(opts_.lease_ms));
  w.setMetadataPool(opts_.metadata_pool);
  w.setDataPool(opts_.data_pool);
  w.setMaxFileSize(opts_.max_file_size);
  Status st =
      msg::read_message<fsproto::Hello>(m, "Hello", [&](fsproto::Hello::Reader h) -> Status {
        if (!opts_.fs_name.empty() && h.getFsName().size() &&
            std::string(h.getFsName()) != opts_.fs_name)
          return Status::Error(ENOENT, "this MDS serves fs " + opts_.fs_name + ", not " +
                                           std::string(h.getFsName()));
        // The mount root: walk it from the root.
        std::string root_path = h.getMountRoot();
        auto root = load(kRootIno);
        if (!root.ok()) return root.status();
        Loaded cur = *root;
        size_t pos = 0;
        while (pos < root_path.size()) {
          size_t next = root_path.find('/', pos);
          if (next == std::string::npos) next = root_path.size();
          std::string part = root_path.substr(pos, next - pos);
          pos = next + 1;
          if (part.empty() || part == ".") continue;
          if (cur.inode.type != FileType::kDirectory)
            return Status::Error(ENOTDIR, "mount root " + root_path + ": not a directory");
          auto d = get_dentry(cur.inode.ino, part);
          if (!d.ok()) return d.status();
          if (!*d) return Status::Error(ENOENT, "mount root " + root_path + ": no " + part);
          auto child = resolve(cur.inode.ino, **d);
          if (!child.ok()) return child.status();
          cur = *child;
        }
        if (cur.inode.type != FileType::kDirectory)
          return Status::Error(ENOTDIR, "mount root " + root_path + ": not a directory");
        inode_to_proto(cur.inode, w.initRoot());

        Session *prev = session_of(link);
        if (prev) end_session(prev->id, false);
        uint64_t id = h.getSessionId();
        if (id != 0 && !sessions_.count(id))
          return Status::Error(
              ESTALE, "session " + std::to_string(id) + " is unknown (expired or never made)");
        bool fresh = id == 0;
        if (fresh) {
          id = next_session_++;
          Session s;
          s.id = id;
          s.client = h.getClientName();
          sessions_[id] = std::move(s);
        }
        Session &s = sessions_[id];
        if (s.link && s.link != link) by_link_.erase(s.link.get());
        s.link = link;
        by_link_[link.get()] = id;
        s.async = h.getSupportsAsync();
        s.inline_data = h.getSupportsInline();
        if (s.inline_data)
          w.setInlineMax(static_cast<uint32_t>(std::min(opts_.inline_max, kInlineDataHardMax)));
        w.setCreateThen(true);
        // The session's record, with a fresh range for an asynchronous
        // client (it drops whatever range it had when it gets a Welcome).
        MetaUpdate u;
        if (s.async && opts_.delegate_inos) {
          InoSpan r = take_range(s, u);
          w.initDelegated().setFirst(r.first);
          w.getDelegated().setCount(r.count);
        }
        if (fresh || !u.empty()) {
          u.sessions.push_back(SessionChange{id, session_rec(s)});
          submit_update(std::move(u));
        }
        w.setSessionId(id);
        w.setCommittedTid(s.committed_tid);
        return Status::OK();
      });
  if (!st.ok()) {
    w.setError(st.code() ? -std::abs(st.code()) : -EINVAL);
    w.setMessage(st.message());
  }
  link->send(msg::make_message(fsproto::MSG_WELCOME, b));
}

// Asynchronous metadata: each request of the Batch runs as if it had come
// alone, in order (dedup, queueing behind a waiting request of the
// session), except that a change gets only its safe reply: the client
// already answered the application itself.
void MdsServer::on_batch(const LinkRef &link, const msg::Message &m) {
  Session *s = session_of(link);
  if (!s) {
    log_.warn("mds", "Batch from " + link->peer() + " without a session (Hello first)");
    return;
  }
  const uint64_t sid = s->id;
  auto pr = msg::PayloadReader::open(m.payload);
  if (!pr.ok()) {
    log_.warn("mds", "bad Batch from " + link->peer() + " (session " + std::to_string(sid) +
                         "): " + pr.status().message());
    return;
  }
  capnp::List<fsproto::Request>::Reader reqs;
  bool urgent = false;
  try {
    auto batch = pr->root<fsproto::Batch>();
    reqs = batch.getRequests();
    urgent = batch.getUrgent();
  } catch (const kj::Exception &e) {
    log_.warn("mds", "malformed Batch from " + link->peer() + " (session " + std::to_string(sid) +
                         "): " + e.getDescription().cStr());
    return;
  }
  const bool too_many = reqs.size() > kBatchMax;
  for (auto req : reqs) {
    // A request may end the session (fencing aside, none does today):
    // look it up again rather than trust `s`.
    auto sit = sessions_.find(sid);
    if (sit == sessions_.end() || sit->second.link != link) return;
    std::optional<uint64_t> tid;
    // A flat copy of its own: it may wait in pending_ after the Batch's
    // buffer is gone. Copying reads it whole, so a malformed one shows here.
    capnp::MallocMessageBuilder copy;
    try {
      tid = req.getTid();
      if (!too_many) copy.setRoot(req);
    } catch (const kj::Exception &e) {
      std::string why = std::string("malformed request in a Batch: ") + e.getDescription().cStr();
      if (tid)
        reply_error(sit->second, *tid, EBADMSG, why);
      else
        log_.warn("mds", why + " from " + link->peer() + " (session " + std::to_string(sid) + ")");
      continue;
    }
    if (too_many) {
      reply_error(sit->second, *tid, E2BIG,
                  "a Batch holds at most " + std::to_string(kBatchMax) + " requests, not " +
                      std::to_string(reqs.size()));
      continue;
    }
    on_request(link, msg::make_message(fsproto::MSG_REQUEST, copy), false, true);
  }
  if (!urgent) return;
  // The client waits for what it sent to be safe: no journal gather for
  // it, nor for its requests still queued here (see commit()).
  store_.hurry();
  auto sit = sessions_.find(sid);
  if (sit != sessions_.end() && sit->second.queued > 0) sit->second.hurry_queued = true;
}

void MdsServer::on_release(const LinkRef &link, const msg::Message &m) {
  Session *s = session_of(link);
  if (!s) return;
  uint64_t sid = s->id;
  MetaUpdate u;
  std::vector<Ino> released;
  Status st = msg::read_message<fsproto::Release>(m, "Release", [&](fsproto::Release::Reader r) {
    // The flushed attributes first: the release makes them visible.
    for (auto f : r.getFlushed()) {
      auto l = load(f.getIno());
      if (!l.ok()) continue;
      auto a = f.getAttr();
      uint32_t mask = a.getMask();
      Loaded cur = *l;
      if (mask & fsproto::SetAttr::MASK_SIZE) cur.inode.size = a.getSize();
      // Checked as in a setattr; a bad one is dropped (the release still
      // goes through: the holder gives the lease up either way).
      if (auto e = apply_data_attrs(cur.inode, a, s->inline_data); e.first != 0) {
        log_.warn("mds", "release of inode " + std::to_string(cur.inode.ino) + " from session " +
                             std::to_string(sid) + ": " + e.second);
        continue;
      }
      if (mask & fsproto::SetAttr::MASK_MTIME) cur.inode.mtime = time_from_proto(a.getMtime());
      if (mask & fsproto::SetAttr::MASK_CTIME) cur.inode.ctime = time_from_proto(a.getCtime());
      if (mask & fsproto::SetAttr::MASK_ATIME) cur.inode.atime = time_from_proto(a.getAtime());
      if (mask & fsproto::SetAttr::MASK_BLOCKS) cur.inode.blocks = a.getBlocks();
      cur.inode.version++;
      put_inode(u, cur);
    }
    for (auto l : r.getLeases()) {
      drop_leases(sid, l.getIno(), l.getSeq(), l.getSeq() == 0);
      released.push_back(l.getIno());
    }
    return Status::OK();
  });
  if (!st.ok()) log_.warn("mds", st.message() + " from " + link->peer());
  if (!u.empty()) submit_update(std::move(u));
  for (Ino ino : released) maybe_purge_stray(ino);
  retry_pending();
}

// ---------------------------------------------------------------------------
// Leases

bool MdsServer::clear_conflicts(uint64_t session, Ino ino, uint32_t kinds_mask) {
  auto it = leases_.find(ino);
  if (it == leases_.end()) return true;
  uint64_t now = now_ms();
  bool clear = true;
  for (LeaseHeld &l : it->second) {
    if (l.session == session || !(kind_bit(l.kind) & kinds_mask) || l.expires <= now) continue;
    clear = false;
    if (l.revoking) continue;
    l.revoking = true;
    auto sit = sessions_.find(l.session);
    if (sit == sessions_.end() || !sit->second.link) continue;  // it runs out
    capnp::MallocMessageBuilder b;
    auto r = b.initRoot<fsproto::Revoke>();
    auto ls = r.initLeases(1);
    ls[0].setIno(ino);
    ls[0].setKind(static_cast<fsproto::LeaseKind>(l.kind));
    ls[0].setSeq(l.seq);
    ls[0].setExpiresMs(l.expires);
    r.setDowngradeTo(fsproto::LeaseKind::NONE);
    send(sit->second, msg::make_message(fsproto::MSG_REVOKE, b));
  }
  return clear;
}

// dirWrite for an asynchronous session when nobody else holds anything on
// the directory (it is exclusive), else dirRead. Not while someone waits for
// a revoke there: a new exclusive lease would hold the waiter up again.
uint8_t MdsServer::dir_lease_kind(const Session &s, Ino dir) const {
  if (!s.async) return kDirReadKind;
  auto it = leases_.find(dir);
  if (it == leases_.end()) return kDirWriteKind;
  uint64_t now = now_ms();
  for (const LeaseHeld &l : it->second) {
    if (l.expires <= now) continue;
    if (l.session != s.id || l.revoking) return kDirReadKind;
  }
  return kDirWriteKind;
}

bool MdsServer::holds_file_lease(Ino ino) const {
  auto it = leases_.find(ino);
  if (it == leases_.end()) return false;
  uint64_t now = now_ms();
  for (const LeaseHeld &l : it->second)
    if ((l.kind == static_cast<uint8_t>(fsproto::LeaseKind::FILE_READ) ||
         l.kind == static_cast<uint8_t>(fsproto::LeaseKind::FILE_WRITE)) &&
        l.expires > now)
      return true;
  return false;
}

MdsServer::LeaseHeld &MdsServer::grant(uint64_t session, Ino ino, uint8_t kind) {
  auto &v = leases_[ino];
  uint64_t now = now_ms();
  uint64_t expires = now + opts_.lease_ms;
  // A lease that ran out (tick() has not swept it yet) is gone: others
  // changed what it covered without a revoke, so it is not renewed under
  // its old seq (the client would keep its stale listing) but granted anew.
  std::erase_if(v, [&](const LeaseHeld &l) {
    return l.session == session && l.kind == kind && l.expires <= now;
  });
  lease_expiry_.emplace(expires, ino);
  for (LeaseHeld &l : v)
    if (l.session == session && l.kind == kind && !l.revoking) {
      l.expires = expires;
      return l;
    }
  LeaseHeld l;
  l.session = session;
  l.kind = kind;
  l.seq = ++lease_seq_[ino];
  l.expires = expires;
  v.push_back(l);
  return v.back();
}

void MdsServer::drop_leases(uint64_t session, Ino ino, uint64_t seq, bool any_seq) {
  auto it = leases_.find(ino);
  if (it == leases_.end()) return;
  std::erase_if(it->second, [&](const LeaseHeld &l) {
    return l.session == session && (any_seq || l.seq == seq);
  });
  if (it->second.empty()) leases_.erase(it);
}

// ---------------------------------------------------------------------------
// Requests: dedup, queueing, replies

namespace {

// A request's kind as the schema names it ("setattr", "create"), for logs.
std::string request_name(fsproto::Request::Reader req) {
  const auto which = uint16_t(req.which());
  KJ_IF_MAYBE (field, capnp::Schema::from<fsproto::Request>().getFieldByDiscriminant(which)) {
    return field->getProto().getName().cStr();
  }
  return "request kind " + std::to_string(which);
}

void build_reply(fsproto::Reply::Builder r, uint64_t tid, int result, const std::string &message,
                 uint64_t now) {
  r.setTid(tid);
  r.setResult(result);
  r.setMessage(message);
  r.setNowMs(now);
}

}  // namespace

void MdsServer::reply_error(Session &s, uint64_t tid, int err, const std::string &message) {
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<fsproto::Reply>();
  build_reply(r, tid, -err, message, now_ms());
  r.setSafe(true);
  send(s, msg::make_message(fsproto::MSG_REPLY, b));
}

bool MdsServer::on_request(const LinkRef &link, msg::Message &&m, bool from_queue, bool batched) {
  Session *s = session_of(link);
  if (!s) {
    log_.warn("mds", "request from " + link->peer() + " without a session (Hello first)");
    return true;
  }
  if (!from_queue) requests_served_++;
  // A session's requests run in order: behind one that waits, the others wait too.
  if (!from_queue && s->queued > 0) {
    s->queued++;
    pending_.push_back(Pending{s->id, std::move(m), batched});
    return true;
  }
  auto pr = msg::PayloadReader::open(m.payload);
  if (!pr.ok()) {
    log_.warn("mds", "bad Request from " + link->peer() + ": " + pr.status().message());
    if (from_queue) s->queued--;
    return true;
  }
  fsproto::Request::Reader req;
  uint64_t tid = 0;
  try {
    req = pr->root<fsproto::Request>();
    tid = req.getTid();
  } catch (const kj::Exception &e) {
    log_.warn("mds", "malformed Request from " + link->peer());
    if (from_queue) s->queued--;
    return true;
  }
  // Duplicates (a replay after a failover, or a resend).
  if (auto r = s->results.find(tid); r != s->results.end()) {
    if (from_queue) s->queued--;
    send(*s, msg::Message{fsproto::MSG_REPLY, r->second, {}});
    return true;
  }
  if (req.getReplay() && tid <= s->committed_tid) {
    capnp::MallocMessageBuilder b;
    auto r = b.initRoot<fsproto::Reply>();
    build_reply(r, tid, 0, "already committed (replay)", now_ms());
    r.setSafe(true);
    if (from_queue) s->queued--;
    send(*s, msg::make_message(fsproto::MSG_REPLY, b));
    return true;
  }

  Outcome o;
  o.batched = batched;
  bool done = true;
  try {
    done = execute(*s, req, o);
  } catch (const kj::Exception &e) {
    o = Outcome{};
    o.fail(EBADMSG, std::string("malformed request: ") + e.getDescription().cStr());
  }
  if (!done) {
    if (!from_queue) {
      s->queued++;
      pending_.push_back(Pending{s->id, std::move(m), batched});
      return true;
    }
    return false;  // retry_pending keeps it
  }
  if (from_queue) s->queued--;
  if (o.deferred) return true;
  if (o.result == -EIO) {
    auto d = eio_log_.admit("eio");
    if (d.log)
      log_.warn(
          "mds",
          "request " + std::to_string(tid) + " (" + request_name(req) + ") of session " +
              std::to_string(s->id) + " failed with EIO: " + o.message +
              (d.suppressed ? " (" + std::to_string(d.suppressed) + " more since the last)" : ""));
  }

  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<fsproto::Reply>();
  build_reply(r, tid, o.result, o.message, now_ms());
  r.setClusterFull(o.cluster_full);
  if (o.inode) inode_to_proto(*o.inode, r.initInode());
  if (o.parent) inode_to_proto(*o.parent, r.initParent());
  if (o.other_parent) inode_to_proto(*o.other_parent, r.initOtherParent());
  if (o.replaced) inode_to_proto(*o.replaced, r.initReplaced());
  if (!o.entries.empty()) {
    auto es = r.initEntries(static_cast<unsigned>(o.entries.size()));
    for (unsigned i = 0; i < o.entries.size(); ++i) {
      const auto &n = o.entries[i].name;
      es[i].setName(capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(n.data()), n.size()));
      inode_to_proto(o.entries[i].inode, es[i].initInode());
    }
  }
  r.setEnd(o.end);
  if (!o.leases.empty()) {
    auto ls = r.initLeases(static_cast<unsigned>(o.leases.size()));
    for (unsigned i = 0; i < o.leases.size(); ++i) {
      ls[i].setIno(o.leases[i].ino);
      ls[i].setKind(static_cast<fsproto::LeaseKind>(o.leases[i].kind));
      ls[i].setSeq(o.leases[i].seq);
      ls[i].setExpiresMs(o.leases[i].expires);
      ls[i].setComplete(o.leases[i].complete);
    }
  }
  if (o.statfs) {
    auto sf = r.initStatfs();
    sf.setTotalBytes(o.statfs->total_bytes);
    sf.setFreeBytes(o.statfs->free_bytes);
    sf.setAvailBytes(o.statfs->avail_bytes);
    // No inode table to run out of: a new file costs at least a block of
    // the space left, so that bounds how many more there can be.
    uint64_t more = o.statfs->avail_bytes / 4096;
    sf.setFiles(o.files + more);
    sf.setFilesFree(more);
  }
  if (o.lock || o.lock_none) {
    auto lk = r.initLock();
    if (o.lock) {
      lk.setKind(static_cast<fsproto::LockKind>(o.lock->kind));
      lk.setType(static_cast<fsproto::LockType>(o.lock->type));
      lk.setStart(o.lock->start);
      lk.setLength(o.lock->end == UINT64_MAX ? 0 : o.lock->end - o.lock->start);
      lk.setOwner(o.lock->owner);
      lk.setPid(o.lock->pid);
    } else {
      lk.setType(fsproto::LockType::UNLOCK);
    }
  }
  if (o.delegated) {
    auto d = r.initDelegated();
    d.setFirst(o.delegated->first);
    d.setCount(o.delegated->count);
  }
  if (o.result != 0 || !o.mutated) {
    r.setSafe(true);
    std::string payload = msg::to_payload(b);
    send(*s, msg::Message{fsproto::MSG_REPLY, payload, {}});
    return true;
  }
  if (!batched) {
    r.setUnsafe(true);
    send(*s, msg::make_message(fsproto::MSG_REPLY, b));
    r.setUnsafe(false);
    // A refill rides on the first reply only: the client appends each
    // range it is sent to its queue.
    if (o.delegated) r.initDelegated();
  }
  r.setSafe(true);
  commit(*s, tid, std::move(o.update), msg::to_payload(b));
  return true;
}

void MdsServer::commit(Session &s, uint64_t tid, MetaUpdate u, std::string final_payload) {
  s.committed_tid = std::max(s.committed_tid, tid);
  // The record keeps the session's newest range: a takeover accepts
  // replayed creates from it.
  u.sessions.push_back(SessionChange{s.id, session_rec(s)});
  s.unsafe.insert(tid);
  s.results[tid] = final_payload;
  while (s.results.size() > kResultsKept) s.results.erase(s.results.begin());
  uint64_t sid = s.id;
  const bool hurry = s.hurry_queued;
  if (s.queued == 0) s.hurry_queued = false;
  store_.submit(std::move(u), [this, sid, tid, payload = std::move(final_payload)](Status st) {
    if (!st.ok()) {
      if (std::abs(st.code()) == ECANCELED) {
        if (!fenced_.exchange(true)) {
          log_.error("mds", "fenced: " + st.message());
          if (opts_.on_fenced) opts_.on_fenced(st);
        }
      } else {
        log_.error("mds", "journal write failed: " + st.message());
      }
      return;
    }
    std::lock_guard lk(mu_);
    auto it = sessions_.find(sid);
    if (it == sessions_.end()) return;
    Session &s2 = it->second;
    s2.unsafe.erase(tid);
    send(s2, msg::Message{fsproto::MSG_REPLY, payload, {}});
    // fsyncs waiting for everything before them.
    uint64_t lowest = s2.unsafe.empty() ? UINT64_MAX : *s2.unsafe.begin();
    for (auto f = s2.fsyncs.begin(); f != s2.fsyncs.end();) {
      if (lowest > f->second) {
        capnp::MallocMessageBuilder b;
        auto r = b.initRoot<fsproto::Reply>();
        build_reply(r, f->first, 0, "", now_ms());
        r.setSafe(true);
        send(s2, msg::make_message(fsproto::MSG_REPLY, b));
        f = s2.fsyncs.erase(f);
      } else {
        ++f;
      }
    }
  });
  if (hurry) store_.hurry();
}

void MdsServer::retry_pending() {
  if (in_retry_) {
    retry_again_ = true;
    return;
  }
  in_retry_ = true;
  do {
    retry_again_ = false;
    retry_once();
  } while (retry_again_);
  in_retry_ = false;
}

void MdsServer::retry_once() {
  // Also waiting locks that may be granted now.
  for (auto w = lock_waiters_.begin(); w != lock_waiters_.end();) {
    if (locks_.conflict(w->ino, w->lock)) {
      ++w;
      continue;
    }
    locks_.apply(w->ino, w->lock);
    auto sit = sessions_.find(w->session);
    if (sit != sessions_.end()) {
      capnp::MallocMessageBuilder b;
      auto g = b.initRoot<fsproto::LockGranted>();
      g.setIno(w->ino);
      g.setTid(w->tid);
      auto lr = g.initLock();
      lr.setKind(static_cast<fsproto::LockKind>(w->lock.kind));
      lr.setType(static_cast<fsproto::LockType>(w->lock.type));
      lr.setStart(w->lock.start);
      lr.setLength(w->lock.end == UINT64_MAX ? 0 : w->lock.end - w->lock.start);
      lr.setOwner(w->lock.owner);
      lr.setPid(w->lock.pid);
      send(sit->second, msg::make_message(fsproto::MSG_LOCK_GRANTED, b));
      capnp::MallocMessageBuilder b2;
      auto r = b2.initRoot<fsproto::Reply>();
      build_reply(r, w->tid, 0, "", now_ms());
      r.setSafe(true);
      send(sit->second, msg::make_message(fsproto::MSG_REPLY, b2));
    }
    w = lock_waiters_.erase(w);
  }
  // Queued requests, in arrival order; each session's stay in order.
  std::deque<Pending> queue;
  queue.swap(pending_);
  std::set<uint64_t> blocked;
  while (!queue.empty()) {
    Pending p = std::move(queue.front());
    queue.pop_front();
    auto sit = sessions_.find(p.session);
    if (sit == sessions_.end() || !sit->second.link) continue;
    if (blocked.count(p.session)) {
      pending_.push_back(std::move(p));
      continue;
    }
    LinkRef link = sit->second.link;
    msg::Message copy = p.m;
    if (!on_request(link, std::move(copy), true, p.batched)) {
      blocked.insert(p.session);
      pending_.push_back(std::move(p));
    }
  }
}

}  // namespace strata::mds
