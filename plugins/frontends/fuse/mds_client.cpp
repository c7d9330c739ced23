#include "mds_client.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <vector>

namespace strata::fuse {

const char *request_kind_name(size_t which) {
  switch (fsproto::Request::Which(which)) {
    case fsproto::Request::LOOKUP:
      return "lookup";
    case fsproto::Request::GETATTR:
      return "getattr";
    case fsproto::Request::SETATTR:
      return "setattr";
    case fsproto::Request::CREATE:
      return "create";
    case fsproto::Request::LINK:
      return "link";
    case fsproto::Request::UNLINK:
      return "unlink";
    case fsproto::Request::RENAME:
      return "rename";
    case fsproto::Request::READDIR:
      return "readdir";
    case fsproto::Request::SETXATTR:
      return "setxattr";
    case fsproto::Request::REMOVEXATTR:
      return "removexattr";
    case fsproto::Request::OPEN:
      return "open";
    case fsproto::Request::STATFS:
      return "statfs";
    case fsproto::Request::SETLOCK:
      return "setlock";
    case fsproto::Request::GETLOCK:
      return "getlock";
    case fsproto::Request::FSYNC:
      return "fsync";
    case fsproto::Request::LOOKUP_INO:
      return "lookup_ino";
    case fsproto::Request::RENEW_LEASES:
      return "renew_leases";
  }
  return "other";
}

ReceivedMessage::ReceivedMessage(const void *payload, size_t len)
    : words_(kj::heapArray<capnp::word>((len + sizeof(capnp::word) - 1) / sizeof(capnp::word))) {
  if (len > 0) std::memcpy(words_.begin(), payload, len);
  reader_ = std::make_unique<capnp::FlatArrayMessageReader>(words_.asPtr());
}

MdsClient::MdsClient(MdsTransport &transport, MdsClientSettings settings, MdsHandlers handlers)
    : transport_(transport), settings_(std::move(settings)), handlers_(std::move(handlers)) {
  if (settings_.async) flusher_ = std::thread([this] { flusher_loop(); });
}

MdsClient::~MdsClient() {
  shutdown();
  if (flusher_.joinable()) flusher_.join();
}

void MdsClient::on_connected() {
  std::lock_guard<std::mutex> l(mu_);
  connected_ = true;
  welcomed_ = false;
  stats_.connected = true;
  send_hello_locked();
}

void MdsClient::on_disconnected() {
  std::lock_guard<std::mutex> l(mu_);
  connected_ = false;
  welcomed_ = false;
  stats_.connected = false;
}

void MdsClient::send_hello_locked() {
  capnp::MallocMessageBuilder msg;
  auto h = msg.initRoot<fsproto::Hello>();
  h.setClientName(settings_.client_name);
  h.setSessionId(session_id_);
  h.setMountRoot(settings_.mount_root);
  h.setFsName(settings_.fs_name);
  h.setSupportsAsync(settings_.async);
  h.setSupportsInline(true);
  auto words = capnp::messageToFlatArray(msg);
  auto bytes = words.asBytes();
  transport_.send(fsproto::MSG_HELLO, bytes.begin(), bytes.size());
}

void MdsClient::on_message(uint16_t type, const void *payload, size_t len) {
  std::shared_ptr<ReceivedMessage> m;
  try {
    m = std::make_shared<ReceivedMessage>(payload, len);
  } catch (const kj::Exception &) {
    return;  // a message we cannot decode answers nothing
  }
  switch (type) {
    case fsproto::MSG_WELCOME: {
      std::lock_guard<std::mutex> l(mu_);
      handle_welcome_locked(std::move(m));
      break;
    }
    case fsproto::MSG_REPLY: {
      bool async = false;
      {
        std::lock_guard<std::mutex> l(mu_);
        async = handle_reply_locked(m);
      }
      if (async && handlers_.on_async_reply) handlers_.on_async_reply(std::move(m));
      break;
    }
    case fsproto::MSG_REVOKE:
      if (handlers_.on_revoke) handlers_.on_revoke(std::move(m));
      break;
    case fsproto::MSG_LOCK_GRANTED:
      if (handlers_.on_lock_granted) handlers_.on_lock_granted(std::move(m));
      break;
    default:
      break;  // BatchReply: not sent (batched requests get ordinary Replies)
  }
}

void MdsClient::handle_welcome_locked(std::shared_ptr<ReceivedMessage> m) {
  auto w = m->root<fsproto::Welcome>();
  if (w.getError() == -ESTALE && welcome_ && session_id_ != 0) {
    // The MDS no longer knows the session this mount resumes (its record
    // was not yet durable when a standby took over, or it ended): a fresh
    // one, not a mount that waits for ever. What the old session had
    // answered but not made safe is gone with it: the next fsync or
    // syncfs says so (EIO), the rest is resent under the new session.
    size_t lost = 0;
    for (const auto &[tid, p] : pending_)
      if (p.answered && !p.safe) ++lost;
    if (lost > 0 && async_error_ == 0) {
      async_error_ = -EIO;
      async_error_message_ = "the MDS no longer knew session " + std::to_string(session_id_) +
                             ": " + std::to_string(lost) +
                             " change(s) it had answered but not made durable are lost";
    }
    ++stats_.sessions_lost;
    session_id_ = 0;
    send_hello_locked();
    return;
  }
  if (w.getError() != 0) {
    welcome_error_ = w.getError();
    welcome_message_ = w.getMessage();
    cv_.notify_all();
    return;
  }
  bool first = !welcome_;
  bool resumed = !first && w.getSessionId() == session_id_;
  if (!first) ++stats_.reconnects;
  session_id_ = w.getSessionId();
  stats_.session_id = session_id_;
  welcome_ = m;
  welcomed_ = true;
  create_then_ = w.getCreateThen();
  // Numbers delegated by an earlier MDS (or session) are not ours now.
  ranges_.clear();
  add_range_locked(w.getDelegated().getFirst(), w.getDelegated().getCount());
  // Whatever was queued for a batch goes out below, one by one.
  batch_.clear();
  uint64_t committed = w.getCommittedTid();
  // In tid order: what the MDS has not committed is replayed; what it
  // never answered is sent (again).
  std::set<uint64_t> split_off;  // sent below, right after their creates
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending &p = it->second;
    if (p.safe || split_off.count(it->first)) {  // done; its caller has yet to pick up the reply
      ++it;
      continue;
    }
    if (p.answered && (!resumed || it->first <= committed)) {
      // Committed (safe), or the session it belonged to is gone: nothing
      // to replay into.
      if (!p.safe && !p.async) --stats_.unsafe_now;
      p.safe = true;
      if (p.async) {
        async_done_locked(it->first);
        it = pending_.erase(it);
        continue;
      }
      if (p.reply) {
        ++it;  // its caller erases it when it picks up the reply
      } else {
        it = pending_.erase(it);
      }
      continue;
    }
    // Folded attributes an MDS without Create.then would drop unseen.
    const uint64_t then_tid = create_then_ ? 0 : split_create_then_locked(p);
    if (send_request_locked(it->first, p, resumed) == 0 && resumed) ++stats_.replayed;
    if (then_tid) {
      split_off.insert(then_tid);
      send_request_locked(then_tid, pending_[then_tid], false);
    }
    ++it;
  }
  cv_.notify_all();
}

uint64_t MdsClient::split_create_then_locked(Pending &p) {
  capnp::FlatArrayMessageReader original(p.request.asPtr());
  auto orig = original.getRoot<fsproto::Request>();
  if (orig.which() != fsproto::Request::CREATE || !orig.getCreate().hasThen() ||
      orig.getCreate().getThen().getMask() == 0)
    return 0;
  auto then = orig.getCreate().getThen();
  // The setattr, as it was submitted before it folded: the same caller,
  // at the time its ctime says.
  capnp::MallocMessageBuilder set;
  auto s = set.initRoot<fsproto::Request>();
  s.setCaller(orig.getCaller());
  if (then.getMask() & fsproto::SetAttr::MASK_CTIME)
    s.setTime(then.getCtime());
  else if (orig.hasTime())
    s.setTime(orig.getTime());
  auto sa = s.initSetattr();
  sa.setIno(orig.getCreate().getIno());
  sa.setAttr(then);
  const uint64_t tid = next_tid_++;
  s.setTid(tid);
  s.setReplay(false);
  // The create without it.
  capnp::MallocMessageBuilder bare;
  bare.setRoot(orig);
  bare.getRoot<fsproto::Request>().getCreate().initThen();
  p.request = capnp::messageToFlatArray(bare);

  Pending &q = pending_[tid];
  q.request = capnp::messageToFlatArray(set);
  q.async = true;
  ++stats_.requests;
  ++stats_.async_requests;
  ++stats_.waiting_now;
  ++stats_.async_unsafe;
  async_unsafe_.insert(tid);
  last_submitted_ = std::max(last_submitted_, tid);
  return tid;
}

bool MdsClient::handle_reply_locked(std::shared_ptr<ReceivedMessage> m) {
  auto r = m->root<fsproto::Reply>();
  cluster_full_.store(r.getClusterFull(), std::memory_order_relaxed);
  auto it = pending_.find(r.getTid());
  if (it == pending_.end()) return false;  // a duplicate (replayed) answer
  Pending &p = it->second;
  // A refill comes with the first answer to a request; a repeated answer
  // (a resend served from the MDS's record) repeats the range: ignored.
  if (!p.answered && r.hasDelegated())
    add_range_locked(r.getDelegated().getFirst(), r.getDelegated().getCount());
  bool safe = r.getSafe() || !r.getUnsafe();
  if (p.async) {
    if (!p.answered) {
      p.answered = true;
      --stats_.waiting_now;  // nobody waited: not a round trip
    }
    if (r.getResult() < 0) {
      ++stats_.async_failed;
      if (async_error_ == 0) {
        async_error_ = r.getResult();
        async_error_message_ = r.getMessage();
      }
    }
    if (safe) {
      async_done_locked(it->first);
      pending_.erase(it);
    }
    return true;
  }
  if (!p.answered) {
    p.answered = true;
    p.reply = m;
    --stats_.waiting_now;
    ++stats_.round_trips;
    if (!safe) ++stats_.unsafe_now;
    cv_.notify_all();
  } else if (safe && !p.safe) {
    --stats_.unsafe_now;
  }
  if (safe) {
    p.safe = true;
    // A caller that has not picked up its reply yet erases it then.
    if (!p.reply) pending_.erase(it);
  }
  return false;
}

void MdsClient::async_done_locked(uint64_t tid) {
  if (async_unsafe_.erase(tid) > 0) {
    --stats_.async_unsafe;
    cv_.notify_all();
  }
}

void MdsClient::add_range_locked(uint64_t first, uint64_t count) {
  if (first == 0 || count == 0) return;
  ranges_.emplace_back(first, count);
  stats_.delegated_left += count;
}

bool MdsClient::take_ino(uint64_t *ino) {
  std::lock_guard<std::mutex> l(mu_);
  if (!welcomed_ || closing_) return false;
  while (!ranges_.empty() && ranges_.front().second == 0) ranges_.pop_front();
  if (ranges_.empty()) return false;
  *ino = ranges_.front().first++;
  --ranges_.front().second;
  --stats_.delegated_left;
  return true;
}

namespace {

// Two setattrs of one inode by one caller in the same unsent batch become
// one (tar sends chown, chmod and utimens, the kernel the times again: each
// would be a journaled update), and a setattr of a file this client just
// created goes into that create (Create.then). The MDS applies a
// request's owner, then its mode, then a set-id kill (a chown clears set-id
// bits), so: not a mode followed by an owner; a kill followed by a mode
// drops the kill (the explicit mode is what sequential application leaves).
bool merge_attrs(fsproto::SetAttr::Reader a, fsproto::SetAttr::Reader b,
                 fsproto::SetAttr::Builder m) {
  using SA = fsproto::SetAttr;
  uint32_t ma = a.getMask(), mb = b.getMask();
  if ((ma & SA::MASK_MODE) && (mb & (SA::MASK_UID | SA::MASK_GID))) return false;
  // "now" flags are the MDS's clock: keep those requests whole.
  if ((ma | mb) & (SA::MASK_ATIME_NOW | SA::MASK_MTIME_NOW)) return false;
  if (mb & SA::MASK_MODE) ma &= ~SA::MASK_KILL_SUIDGID;
  if (mb & SA::MASK_MODE) m.setMode(b.getMode());
  if (mb & SA::MASK_UID) m.setUid(b.getUid());
  if (mb & SA::MASK_GID) m.setGid(b.getGid());
  if (mb & SA::MASK_SIZE) m.setSize(b.getSize());
  if (mb & SA::MASK_ATIME) m.setAtime(b.getAtime());
  if (mb & SA::MASK_MTIME) m.setMtime(b.getMtime());
  if (mb & SA::MASK_CTIME) m.setCtime(b.getCtime());
  if (mb & SA::MASK_BLOCKS) m.setBlocks(b.getBlocks());
  if (mb & SA::MASK_INLINE) {
    m.setDataInline(b.getDataInline());
    m.setInlineData(b.getInlineData());
  }
  m.setMask(ma | mb);
  return true;
}

bool same_caller(fsproto::Request::Reader x, fsproto::Request::Reader y) {
  auto cx = x.getCaller(), cy = y.getCaller();
  return cx.getUid() == cy.getUid() && cx.getGid() == cy.getGid();
}

// `second` (a setattr) folded into `first`, an earlier setattr of the same
// inode: false when they must stay two.
bool merge_setattr(fsproto::Request::Reader first, fsproto::Request::Reader second,
                   capnp::MessageBuilder &out) {
  if (!same_caller(first, second)) return false;
  out.setRoot(first);
  auto r = out.getRoot<fsproto::Request>();
  if (!merge_attrs(first.getSetattr().getAttr(), second.getSetattr().getAttr(),
                   r.getSetattr().getAttr()))
    return false;
  if (second.hasTime()) r.setTime(second.getTime());
  return true;
}

// `second` (a setattr) folded into `create`, the exclusive create of its
// inode, as Create.then: only what the MDS takes there (mode, owner, times,
// a kill, and a size report with its inline bytes; a change of owner or
// size only by root, so that it cannot fail where the separate setattr
// would not have), with the setattr's own ctime (the create's time stays
// the new inode's).
bool merge_into_create(fsproto::Request::Reader create, fsproto::Request::Reader second,
                       capnp::MessageBuilder &out) {
  using SA = fsproto::SetAttr;
  constexpr uint32_t kThen = SA::MASK_MODE | SA::MASK_UID | SA::MASK_GID | SA::MASK_ATIME |
                             SA::MASK_MTIME | SA::MASK_CTIME | SA::MASK_KILL_SUIDGID |
                             SA::MASK_SIZE | SA::MASK_BLOCKS | SA::MASK_INLINE;
  auto c = create.getCreate();
  auto b = second.getSetattr().getAttr();
  const uint32_t mb = b.getMask();
  if (!c.getExclusive() || !same_caller(create, second) || (mb & ~kThen)) return false;
  // A size report: only root's (it checks write permission, which the
  // creator of a read-only file lacks), and inline bytes only into a
  // create that starts inline.
  if ((mb & (SA::MASK_SIZE | SA::MASK_INLINE)) && create.getCaller().getUid() != 0) return false;
  if ((mb & SA::MASK_INLINE) && b.getDataInline() && !c.getDataInline()) return false;
  if ((mb & (SA::MASK_UID | SA::MASK_GID)) && second.getCaller().getUid() != 0) return false;
  const bool ctime_known = (mb & SA::MASK_CTIME) || second.hasTime();
  if (!ctime_known) return false;
  out.setRoot(create);
  auto then = out.getRoot<fsproto::Request>().getCreate().getThen();
  if (!merge_attrs(c.getThen(), b, then)) return false;
  if (!(mb & SA::MASK_CTIME)) {
    then.setCtime(second.getTime());
    then.setMask(then.getMask() | SA::MASK_CTIME);
  }
  return true;
}

// `rename` folded into `create`, an earlier request of the batch: the rename
// of the name that create makes to a name known to be free in the same
// directory (an rsync's temporary file put in place). The file is made
// under its new name, and what the two leave stays: the inode's atime and
// mtime are the create's (Create.then), its ctime and the directory's
// times the rename's (the create's time).
bool merge_rename_into_create(fsproto::Request::Reader create, fsproto::Request::Reader rename,
                              capnp::MessageBuilder &out) {
  using SA = fsproto::SetAttr;
  constexpr uint32_t kNoReplace = 1;  // RENAME_NOREPLACE: the name is free anyway
  auto c = create.getCreate();
  auto r = rename.getRename();
  if (!c.getExclusive() || !same_caller(create, rename) || !create.hasTime() || !rename.hasTime() ||
      (r.getFlags() & ~kNoReplace))
    return false;
  if (r.getParent() != c.getParent() || r.getNewParent() != c.getParent() ||
      r.getName() != c.getName())
    return false;
  out.setRoot(create);
  auto q = out.getRoot<fsproto::Request>();
  q.setTime(rename.getTime());
  auto made = q.getCreate();
  made.setName(r.getNewName());
  auto then = made.getThen();
  uint32_t mask = then.getMask();
  if (!(mask & SA::MASK_ATIME)) then.setAtime(create.getTime()), mask |= SA::MASK_ATIME;
  if (!(mask & SA::MASK_MTIME)) then.setMtime(create.getTime()), mask |= SA::MASK_MTIME;
  then.setCtime(rename.getTime());
  then.setMask(mask | SA::MASK_CTIME);
  return true;
}

// Does `r` (not a setattr of `ino`, not its create) leave `ino` alone, so
// that a later setattr of `ino` may be applied before it? Only creates
// elsewhere and setattrs of other inodes are known to: anything else may
// name `ino` (a rename, an unlink) or read its mode (a create inside it).
bool leaves_alone(fsproto::Request::Reader r, uint64_t ino) {
  switch (r.which()) {
    case fsproto::Request::SETATTR:
      return r.getSetattr().getIno() != ino;
    case fsproto::Request::CREATE:
      return r.getCreate().getParent() != ino && r.getCreate().getIno() != ino;
    default:
      return false;
  }
}

}  // namespace

bool MdsClient::create_unsent(uint64_t tid) const {
  std::lock_guard<std::mutex> l(mu_);
  if (!create_then_ || std::find(batch_.begin(), batch_.end(), tid) == batch_.end()) return false;
  auto it = pending_.find(tid);
  if (it == pending_.end()) return false;
  capnp::FlatArrayMessageReader r(it->second.request.asPtr());
  auto req = r.getRoot<fsproto::Request>();
  return req.which() == fsproto::Request::CREATE && req.getCreate().getExclusive() &&
         req.getCaller().getUid() == 0 && req.getCaller().getGid() == 0;
}

void MdsClient::replace_request_locked(uint64_t tid, Pending &p, capnp::MessageBuilder &merged) {
  merged.getRoot<fsproto::Request>().setTid(tid);
  batch_bytes_ -= p.request.asBytes().size();
  p.request = capnp::messageToFlatArray(merged);
  batch_bytes_ += p.request.asBytes().size();
}

bool MdsClient::fold_back_locked(
    uint64_t *tid,
    const std::function<FoldStep(fsproto::Request::Reader, capnp::MessageBuilder &)> &look) {
  // A few back at most: the batch is short, and each look decodes one.
  constexpr size_t kLookBack = 16;
  size_t looked = 0;
  for (auto at = batch_.rbegin(); at != batch_.rend() && looked < kLookBack; ++at, ++looked) {
    auto it = pending_.find(*at);
    if (it == pending_.end()) continue;
    capnp::FlatArrayMessageReader before(it->second.request.asPtr());
    capnp::MallocMessageBuilder merged;
    FoldStep step = look(before.getRoot<fsproto::Request>(), merged);
    if (step == FoldStep::kPast) continue;
    if (step == FoldStep::kStop) return false;
    replace_request_locked(*at, it->second, merged);
    *tid = *at;
    return true;
  }
  return false;
}

bool MdsClient::fold_setattr_locked(fsproto::Request::Reader req, uint64_t *tid) {
  const uint64_t ino = req.getSetattr().getIno();
  return fold_back_locked(tid, [&](fsproto::Request::Reader prev, capnp::MessageBuilder &merged) {
    bool folded = false;
    if (prev.which() == fsproto::Request::SETATTR && prev.getSetattr().getIno() == ino)
      folded = merge_setattr(prev, req, merged);
    else if (prev.which() == fsproto::Request::CREATE && prev.getCreate().getIno() == ino)
      folded = create_then_ && merge_into_create(prev, req, merged);
    else if (leaves_alone(prev, ino))
      return FoldStep::kPast;
    return folded ? FoldStep::kFolded : FoldStep::kStop;
  });
}

bool MdsClient::fold_rename_locked(fsproto::Request::Reader req, uint64_t *tid) {
  if (!create_then_) return false;
  // Setattrs of other inodes may lie between the create and its rename (an
  // earlier file's size report, sent when its write-out ended): they name
  // no entry, so the rename may go before them. Not one of the directory
  // (its times are the rename's) or of the new file (its ctime).
  const uint64_t dir = req.getRename().getParent();
  std::vector<uint64_t> passed;  // the inodes of the setattrs looked past
  return fold_back_locked(tid, [&](fsproto::Request::Reader prev, capnp::MessageBuilder &merged) {
    if (prev.which() == fsproto::Request::SETATTR && prev.getSetattr().getIno() != dir) {
      passed.push_back(prev.getSetattr().getIno());
      return FoldStep::kPast;
    }
    if (prev.which() != fsproto::Request::CREATE ||
        std::find(passed.begin(), passed.end(), prev.getCreate().getIno()) != passed.end())
      return FoldStep::kStop;
    return merge_rename_into_create(prev, req, merged) ? FoldStep::kFolded : FoldStep::kStop;
  });
}

uint64_t MdsClient::submit(const std::function<void(fsproto::Request::Builder)> &fill,
                           bool new_name_free) {
  capnp::MallocMessageBuilder msg;
  auto req = msg.initRoot<fsproto::Request>();
  fill(req);
  std::lock_guard<std::mutex> l(mu_);
  if (closing_) return 0;
  const auto kind = req.which();
  if (!batch_.empty() &&
      (kind == fsproto::Request::SETATTR || (kind == fsproto::Request::RENAME && new_name_free))) {
    uint64_t into = 0;
    if (kind == fsproto::Request::SETATTR ? fold_setattr_locked(req.asReader(), &into)
                                          : fold_rename_locked(req.asReader(), &into)) {
      ++stats_.async_merged;
      if (size_t(req.which()) < MdsClientStats::kKinds) ++stats_.async_by_kind[size_t(req.which())];
      return into;
    }
  }
  uint64_t tid = next_tid_++;
  req.setTid(tid);
  req.setReplay(false);
  Pending &p = pending_[tid];
  p.request = capnp::messageToFlatArray(msg);
  p.async = true;
  if (size_t(req.which()) < MdsClientStats::kKinds) ++stats_.async_by_kind[size_t(req.which())];
  ++stats_.requests;
  ++stats_.async_requests;
  ++stats_.waiting_now;
  ++stats_.async_unsafe;
  async_unsafe_.insert(tid);
  last_submitted_ = tid;
  // Not welcomed: handle_welcome_locked sends it with the rest.
  if (connected_ && welcomed_) {
    if (batch_.empty()) batch_since_ = std::chrono::steady_clock::now(), batch_bytes_ = 0;
    batch_.push_back(tid);
    batch_bytes_ += p.request.asBytes().size();
    // Well under the messenger's 4 MiB payload, whatever the inline data.
    if (batch_.size() >= settings_.batch_max || batch_bytes_ >= (1u << 20))
      flush_batch_locked();
    else if (batch_.size() == 1)
      flush_cv_.notify_all();
  }
  return tid;
}

void MdsClient::flush_batch() {
  std::lock_guard<std::mutex> l(mu_);
  flush_batch_locked();
}

void MdsClient::flush_batch_locked(bool urgent) {
  if (batch_.empty() && !urgent) return;
  if (!connected_ || !welcomed_) return;  // the Welcome resends them
  capnp::MallocMessageBuilder msg;
  auto root = msg.initRoot<fsproto::Batch>();
  root.setUrgent(urgent);
  auto reqs = root.initRequests(uint32_t(batch_.size()));
  uint32_t n = 0;
  for (uint64_t tid : batch_) {
    auto it = pending_.find(tid);
    if (it == pending_.end()) continue;
    capnp::FlatArrayMessageReader one(it->second.request.asPtr());
    reqs.setWithCaveats(n++, one.getRoot<fsproto::Request>());
  }
  batch_.clear();
  if (n == 0 && !urgent) return;
  auto words = capnp::messageToFlatArray(msg);
  auto bytes = words.asBytes();
  transport_.send(fsproto::MSG_BATCH, bytes.begin(), bytes.size());
  ++stats_.batches;
}

void MdsClient::flusher_loop() {
  std::unique_lock<std::mutex> l(mu_);
  const auto delay = std::chrono::microseconds(settings_.batch_delay_us);
  while (!closing_) {
    // Nothing to send, or nowhere to send it (the Welcome resends what
    // was queued, one by one).
    if (batch_.empty() || !connected_ || !welcomed_) {
      flush_cv_.wait(l);
      continue;
    }
    auto due = batch_since_ + delay;
    if (std::chrono::steady_clock::now() >= due) {
      flush_batch_locked();
      continue;
    }
    flush_cv_.wait_until(l, due);
  }
}

uint64_t MdsClient::last_submitted() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_submitted_;
}

int MdsClient::wait_safe(uint64_t tid, uint32_t timeout_ms) {
  std::unique_lock<std::mutex> l(mu_);
  if (async_unsafe_.empty() || *async_unsafe_.begin() > tid) return 0;
  // Only if the batch holds one it waits for: a write-out checking that
  // its long-safe create is safe must not cut the current batch short.
  // Urgent: the MDS journals what we wait for without its gather delay.
  if (!batch_.empty() && batch_.front() <= tid) {
    flush_batch_locked(/*urgent=*/true);
  } else {
    std::vector<uint64_t> later;
    later.swap(batch_);
    flush_batch_locked(/*urgent=*/true);  // no requests: only "urgent"
    batch_.swap(later);
  }
  cv_.wait_for(l, std::chrono::milliseconds(timeout_ms),
               [&] { return closing_ || async_unsafe_.empty() || *async_unsafe_.begin() > tid; });
  if (async_unsafe_.empty() || *async_unsafe_.begin() > tid) return 0;
  return closing_ ? -ESHUTDOWN : -ETIMEDOUT;
}

int MdsClient::take_async_error(std::string *message) {
  std::lock_guard<std::mutex> l(mu_);
  int e = async_error_;
  if (message) *message = async_error_message_;
  async_error_ = 0;
  async_error_message_.clear();
  return e;
}

int MdsClient::send_request_locked(uint64_t tid, Pending &p, bool replay) {
  if (!connected_ || !welcomed_) return -ENOTCONN;
  if (!replay) {
    auto bytes = p.request.asBytes();
    return transport_.send(fsproto::MSG_REQUEST, bytes.begin(), bytes.size());
  }
  capnp::FlatArrayMessageReader original(p.request.asPtr());
  capnp::MallocMessageBuilder copy;
  copy.setRoot(original.getRoot<fsproto::Request>());
  auto req = copy.getRoot<fsproto::Request>();
  req.setReplay(true);
  req.setTid(tid);
  auto words = capnp::messageToFlatArray(copy);
  auto bytes = words.asBytes();
  return transport_.send(fsproto::MSG_REQUEST, bytes.begin(), bytes.size());
}

int MdsClient::wait_welcome(uint32_t timeout_ms, std::string *message) {
  std::unique_lock<std::mutex> l(mu_);
  bool done = cv_.wait_for(l, std::chrono::milliseconds(timeout_ms),
                           [&] { return welcome_ || welcome_error_ != 0 || closing_; });
  if (welcome_error_ != 0) {
    if (message) *message = welcome_message_;
    return welcome_error_;
  }
  if (closing_) return -ESHUTDOWN;
  if (!done) {
    if (message)
      *message = connected_ ? "connected to the MDS, but no Welcome came"
                            : "no active MDS could be reached";
    return -ETIMEDOUT;
  }
  return 0;
}

std::shared_ptr<ReceivedMessage> MdsClient::welcome() const {
  std::lock_guard<std::mutex> l(mu_);
  return welcome_;
}

std::shared_ptr<ReceivedMessage> MdsClient::call(
    const std::function<void(fsproto::Request::Builder)> &fill, int *err, uint32_t timeout_ms) {
  capnp::MallocMessageBuilder msg;
  auto req = msg.initRoot<fsproto::Request>();
  fill(req);
  std::unique_lock<std::mutex> l(mu_);
  if (closing_) {
    *err = -ESHUTDOWN;
    return nullptr;
  }
  uint64_t tid = next_tid_++;
  req.setTid(tid);
  req.setReplay(false);
  Pending &p = pending_[tid];
  p.request = capnp::messageToFlatArray(msg);
  ++stats_.requests;
  ++stats_.waiting_now;
  if (size_t(req.which()) < MdsClientStats::kKinds) ++stats_.sync_by_kind[size_t(req.which())];
  // What was submitted before goes first: the MDS runs a session's
  // messages in order.
  flush_batch_locked();
  // Not connected: sent from handle_welcome_locked once welcomed.
  send_request_locked(tid, p, false);
  auto done = [&] {
    auto it = pending_.find(tid);
    return closing_ || it == pending_.end() || it->second.answered;
  };
  if (timeout_ms == 0) {
    cv_.wait(l, done);
  } else if (!cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), done)) {
    pending_.erase(tid);
    --stats_.waiting_now;
    *err = -ETIMEDOUT;
    return nullptr;
  }
  auto it = pending_.find(tid);
  if (it == pending_.end() || !it->second.answered) {
    if (it != pending_.end()) pending_.erase(it);
    *err = -ESHUTDOWN;
    return nullptr;
  }
  auto reply = it->second.reply;
  it->second.reply.reset();  // kept only for replay bookkeeping now
  if (it->second.safe) pending_.erase(it);
  *err = 0;
  return reply;
}

int MdsClient::send(uint16_t type, capnp::MessageBuilder &msg) {
  auto words = capnp::messageToFlatArray(msg);
  auto bytes = words.asBytes();
  std::lock_guard<std::mutex> l(mu_);
  if (!connected_ || !welcomed_) return -ENOTCONN;
  return transport_.send(type, bytes.begin(), bytes.size());
}

void MdsClient::shutdown() {
  std::lock_guard<std::mutex> l(mu_);
  closing_ = true;
  cv_.notify_all();
  flush_cv_.notify_all();
}

MdsClientStats MdsClient::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

std::vector<uint64_t> MdsClient::kept_tids() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<uint64_t> out;
  for (const auto &[tid, p] : pending_) out.push_back(tid);
  return out;
}

}  // namespace strata::fuse
