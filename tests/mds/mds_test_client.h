// A filesystem client for the MDS server tests: speaks sdk/proto/fs.capnp
// to an MdsServer through a ClientLink (the server's dispatch, as the
// daemon's messenger would), and waits for what comes back.
#pragma once

#include <capnp/message.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mds/mds_server.h"
#include "mds/proto_convert.h"
#include "msg/wire_codec.h"

namespace strata::mds::test {

// Everything a Reply says, decoded.
struct ReplyView {
  uint64_t tid = 0;
  int result = 0;
  bool safe = false, unsafe = false;
  std::string message;
  std::optional<InodeRec> inode, parent, replaced;
  std::vector<std::pair<std::string, InodeRec>> entries;
  bool end = false;
  struct L {
    uint64_t ino, seq;
    fsproto::LeaseKind kind;
    bool complete;
  };
  std::vector<L> leases;
  fsproto::LockType lock_type = fsproto::LockType::UNLOCK;
  uint64_t lock_owner = 0;
  uint64_t files = 0;
  uint64_t delegated_first = 0, delegated_count = 0;  // a refill (count 0: none)
  bool cluster_full = false;                          // Reply.clusterFull
};

class Inbox : public ClientLink {
 public:
  explicit Inbox(std::string name) : name_(std::move(name)) {}
  bool send(msg::Message m) override {
    std::lock_guard lk(mu_);
    q_.push_back(std::move(m));
    cv_.notify_all();
    return true;
  }
  std::string peer() const override { return name_; }
  // The first message matching, removed; nullopt after `wait`.
  std::optional<msg::Message> take(const std::function<bool(const msg::Message &)> &match,
                                   std::chrono::milliseconds wait) {
    std::unique_lock lk(mu_);
    std::optional<msg::Message> out;
    cv_.wait_for(lk, wait, [&] {
      for (auto it = q_.begin(); it != q_.end(); ++it)
        if (match(*it)) {
          out = std::move(*it);
          q_.erase(it);
          return true;
        }
      return false;
    });
    return out;
  }

 private:
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<msg::Message> q_;
};

inline ReplyView decode_reply(const msg::Message &m) {
  ReplyView v;
  auto st = msg::read_message<fsproto::Reply>(m, "Reply", [&](fsproto::Reply::Reader r) {
    v.tid = r.getTid();
    v.result = r.getResult();
    v.safe = r.getSafe();
    v.unsafe = r.getUnsafe();
    v.message = r.getMessage();
    v.cluster_full = r.getClusterFull();
    if (r.hasInode()) v.inode = inode_from_proto(r.getInode());
    if (r.hasParent()) v.parent = inode_from_proto(r.getParent());
    if (r.hasReplaced()) v.replaced = inode_from_proto(r.getReplaced());
    for (auto e : r.getEntries()) {
      auto n = e.getName();
      v.entries.emplace_back(std::string(reinterpret_cast<const char *>(n.begin()), n.size()),
                             inode_from_proto(e.getInode()));
    }
    v.end = r.getEnd();
    for (auto l : r.getLeases())
      v.leases.push_back({l.getIno(), l.getSeq(), l.getKind(), l.getComplete()});
    if (r.hasLock()) {
      v.lock_type = r.getLock().getType();
      v.lock_owner = r.getLock().getOwner();
    }
    if (r.hasStatfs()) v.files = r.getStatfs().getFiles();
    if (r.hasDelegated()) {
      v.delegated_first = r.getDelegated().getFirst();
      v.delegated_count = r.getDelegated().getCount();
    }
    return Status::OK();
  });
  if (!st.ok()) v.result = -9999;
  return v;
}

inline uint64_t reply_tid(const msg::Message &m) {
  uint64_t tid = 0;
  (void)msg::read_message<fsproto::Reply>(m, "Reply", [&](fsproto::Reply::Reader r) {
    tid = r.getTid();
    return Status::OK();
  });
  return tid;
}

inline capnp::Data::Reader data(const std::string &s) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte *>(s.data()), s.size());
}

class TestClient {
 public:
  static constexpr std::chrono::milliseconds kWait{10000};  // only a failure waits this long

  TestClient(MdsServer &srv, std::string name)
      : srv_(srv), link_(std::make_shared<Inbox>(name)), name_(name) {}

  MdsServer &server() { return srv_; }
  Inbox &inbox() { return *link_; }
  uint64_t session() const { return session_; }
  uint32_t uid = 0, gid = 0;
  bool supports_inline = false;  // said in the next hello()

  using Fill = std::function<void(fsproto::Request::Builder)>;

  // Opens (or resumes) a session; returns the Welcome's error (0) and
  // committedTid. With `async`, the Welcome's range is in delegated().
  std::pair<int, uint64_t> hello(uint64_t resume = 0, bool async = false) {
    capnp::MallocMessageBuilder b;
    auto h = b.initRoot<fsproto::Hello>();
    h.setClientName(name_);
    h.setSessionId(resume);
    h.setMountRoot("/");
    h.setSupportsAsync(async);
    h.setSupportsInline(supports_inline);
    srv_.handle(link_, msg::make_message(fsproto::MSG_HELLO, b));
    auto m =
        link_->take([](const msg::Message &x) { return x.type == fsproto::MSG_WELCOME; }, kWait);
    int err = -1;
    uint64_t committed = 0;
    if (!m) return {-ETIMEDOUT, 0};
    (void)msg::read_message<fsproto::Welcome>(*m, "Welcome", [&](fsproto::Welcome::Reader w) {
      err = w.getError();
      session_ = w.getSessionId();
      committed = w.getCommittedTid();
      delegated_ = {w.getDelegated().getFirst(), w.getDelegated().getCount()};
      inline_max_ = w.getInlineMax();
      return Status::OK();
    });
    return {err, committed};
  }

  // The Welcome's range: (first, count); count 0: none.
  std::pair<Ino, uint64_t> delegated() const { return delegated_; }
  uint32_t inline_max() const { return inline_max_; }

  // Sends one Batch of requests; returns their tids (`tids`: replay these).
  std::vector<uint64_t> batch(const std::vector<Fill> &fills,
                              const std::vector<uint64_t> &tids = {}, bool replay = false) {
    capnp::MallocMessageBuilder b;
    auto reqs = b.initRoot<fsproto::Batch>().initRequests(static_cast<unsigned>(fills.size()));
    std::vector<uint64_t> out;
    for (unsigned i = 0; i < fills.size(); ++i) {
      auto r = reqs[i];
      r.setTid(i < tids.size() ? tids[i] : ++tid_);
      r.setReplay(replay);
      auto c = r.initCaller();
      c.setUid(uid);
      c.setGid(gid);
      fills[i](r);
      out.push_back(r.getTid());
    }
    srv_.handle(link_, msg::make_message(fsproto::MSG_BATCH, b));
    return out;
  }

  // Sends a request filled by `fill`; returns its tid.
  uint64_t send(const std::function<void(fsproto::Request::Builder)> &fill, uint64_t tid = 0,
                bool replay = false) {
    capnp::MallocMessageBuilder b;
    auto r = b.initRoot<fsproto::Request>();
    r.setTid(tid ? tid : ++tid_);
    r.setReplay(replay);
    auto c = r.initCaller();
    c.setUid(uid);
    c.setGid(gid);
    fill(r);
    uint64_t t = r.getTid();
    srv_.handle(link_, msg::make_message(fsproto::MSG_REQUEST, b));
    return t;
  }
  // The next Reply for `tid` (unsafe or safe), or nullopt after `wait`.
  std::optional<ReplyView> reply(uint64_t tid, std::chrono::milliseconds wait = kWait) {
    auto m = link_->take(
        [&](const msg::Message &x) { return x.type == fsproto::MSG_REPLY && reply_tid(x) == tid; },
        wait);
    if (!m) return std::nullopt;
    return decode_reply(*m);
  }
  // The first reply, then drains the safe one if the first was unsafe.
  ReplyView call(const std::function<void(fsproto::Request::Builder)> &fill) {
    uint64_t tid = send(fill);
    auto r = reply(tid);
    if (!r) {
      ReplyView v;
      v.tid = tid;
      v.result = -ETIMEDOUT;
      return v;
    }
    if (r->unsafe) {
      auto s = reply(tid);
      if (!s || !s->safe) r->result = -EPROTO;
    }
    return *r;
  }

  // Requests.
  ReplyView lookup(Ino parent, const std::string &name) {
    return call([&](auto r) {
      auto q = r.initLookup();
      q.setParent(parent);
      q.setName(data(name));
    });
  }
  ReplyView getattr(Ino ino) {
    return call([&](auto r) { r.initGetattr().setIno(ino); });
  }
  static void fill_create(fsproto::Request::Builder r, Ino parent, const std::string &name,
                          fsproto::FileType type, uint32_t mode, bool excl, Ino ino = 0) {
    auto q = r.initCreate();
    q.setIno(ino);
    q.setParent(parent);
    q.setName(data(name));
    q.setType(type);
    q.setMode(mode);
    q.setExclusive(excl);
  }
  ReplyView create(Ino parent, const std::string &name, bool excl = true, uint32_t mode = 0644) {
    return call(
        [&](auto r) { fill_create(r, parent, name, fsproto::FileType::REGULAR, mode, excl); });
  }
  ReplyView create_inline(Ino parent, const std::string &name) {
    return call([&](auto r) {
      fill_create(r, parent, name, fsproto::FileType::REGULAR, 0644, true);
      r.getCreate().setDataInline(true);
    });
  }
  // A fileWrite holder's size report, saying where the data is: these
  // inline bytes, or (nullopt) its data objects.
  ReplyView report_data(Ino ino, uint64_t size, const std::optional<std::string> &bytes) {
    return call([&](auto r) {
      auto q = r.initSetattr();
      q.setIno(ino);
      auto a = q.initAttr();
      a.setMask(fsproto::SetAttr::MASK_SIZE | fsproto::SetAttr::MASK_INLINE);
      a.setSize(size);
      a.setDataInline(bytes.has_value());
      if (bytes) a.setInlineData(data(*bytes));
    });
  }
  ReplyView truncate(Ino ino, uint64_t size) {
    return call([&](auto r) {
      auto q = r.initSetattr();
      q.setIno(ino);
      q.initAttr().setMask(fsproto::SetAttr::MASK_SIZE);
      q.getAttr().setSize(size);
    });
  }
  ReplyView mkdir(Ino parent, const std::string &name, uint32_t mode = 0755) {
    return call(
        [&](auto r) { fill_create(r, parent, name, fsproto::FileType::DIRECTORY, mode, true); });
  }
  ReplyView unlink(Ino parent, const std::string &name, bool dir = false, bool closed = false) {
    return call([&](auto r) {
      auto q = r.initUnlink();
      q.setParent(parent);
      q.setName(data(name));
      q.setDirectory(dir);
      q.setClosed(closed);
    });
  }
  ReplyView rename(Ino p, const std::string &n, Ino np, const std::string &nn, uint32_t flags = 0) {
    return call([&](auto r) {
      auto q = r.initRename();
      q.setParent(p);
      q.setName(data(n));
      q.setNewParent(np);
      q.setNewName(data(nn));
      q.setFlags(flags);
    });
  }
  ReplyView link(Ino ino, Ino np, const std::string &nn) {
    return call([&](auto r) {
      auto q = r.initLink();
      q.setIno(ino);
      q.setNewParent(np);
      q.setNewName(data(nn));
    });
  }
  ReplyView readdir(Ino dir, const std::string &after = "", uint32_t max = 0) {
    return call([&](auto r) {
      auto q = r.initReaddir();
      q.setIno(dir);
      q.setAfter(data(after));
      q.setMaxEntries(max);
    });
  }
  ReplyView chmod(Ino ino, uint32_t mode) {
    return call([&](auto r) {
      auto q = r.initSetattr();
      q.setIno(ino);
      q.initAttr().setMask(fsproto::SetAttr::MASK_MODE);
      q.getAttr().setMode(mode);
    });
  }
  ReplyView chown(Ino ino, uint32_t u) {
    return call([&](auto r) {
      auto q = r.initSetattr();
      q.setIno(ino);
      q.initAttr().setMask(fsproto::SetAttr::MASK_UID);
      q.getAttr().setUid(u);
    });
  }
  ReplyView setxattr(Ino ino, const std::string &n, const std::string &v, uint32_t flags = 0) {
    return call([&](auto r) {
      auto q = r.initSetxattr();
      q.setIno(ino);
      q.setName(n);
      q.setValue(data(v));
      q.setFlags(flags);
    });
  }
  ReplyView removexattr(Ino ino, const std::string &n) {
    return call([&](auto r) {
      auto q = r.initRemovexattr();
      q.setIno(ino);
      q.setName(n);
    });
  }
  ReplyView open(Ino ino, uint32_t flags, fsproto::LeaseKind want) {
    return call([&](auto r) {
      auto q = r.initOpen();
      q.setIno(ino);
      q.setFlags(flags);
      q.setWantLease(want);
    });
  }
  static void fill_lock(fsproto::LockRange::Builder l, fsproto::LockType type, uint64_t start,
                        uint64_t len, uint64_t owner) {
    l.setKind(fsproto::LockKind::POSIX);
    l.setType(type);
    l.setStart(start);
    l.setLength(len);
    l.setOwner(owner);
  }
  uint64_t send_setlock(Ino ino, fsproto::LockType type, uint64_t start, uint64_t len, bool wait,
                        uint64_t owner = 1) {
    return send([&](auto r) {
      auto q = r.initSetlock();
      q.setIno(ino);
      q.setWait(wait);
      fill_lock(q.initLock(), type, start, len, owner);
    });
  }
  ReplyView getlock(Ino ino, fsproto::LockType type, uint64_t start, uint64_t len,
                    uint64_t owner = 1) {
    return call([&](auto r) {
      auto q = r.initGetlock();
      q.setIno(ino);
      fill_lock(q.initLock(), type, start, len, owner);
    });
  }

  // Gives leases up (answering a Revoke).
  void release(const std::vector<std::pair<Ino, uint64_t>> &leases) {
    capnp::MallocMessageBuilder b;
    auto r = b.initRoot<fsproto::Release>();
    auto ls = r.initLeases(static_cast<unsigned>(leases.size()));
    for (unsigned i = 0; i < leases.size(); ++i) {
      ls[i].setIno(leases[i].first);
      ls[i].setSeq(leases[i].second);
    }
    srv_.handle(link_, msg::make_message(fsproto::MSG_RELEASE, b));
  }
  // The next Revoke: (ino, seq) pairs.
  std::optional<std::vector<std::pair<Ino, uint64_t>>> revoke(
      std::chrono::milliseconds wait = kWait) {
    auto m = link_->take([](const msg::Message &x) { return x.type == fsproto::MSG_REVOKE; }, wait);
    if (!m) return std::nullopt;
    std::vector<std::pair<Ino, uint64_t>> out;
    (void)msg::read_message<fsproto::Revoke>(*m, "Revoke", [&](fsproto::Revoke::Reader r) {
      for (auto l : r.getLeases()) out.emplace_back(l.getIno(), l.getSeq());
      return Status::OK();
    });
    return out;
  }
  bool lock_granted(uint64_t tid, std::chrono::milliseconds wait = kWait) {
    auto m = link_->take([](const msg::Message &x) { return x.type == fsproto::MSG_LOCK_GRANTED; },
                         wait);
    if (!m) return false;
    uint64_t got = 0;
    (void)msg::read_message<fsproto::LockGranted>(*m, "LockGranted",
                                                  [&](fsproto::LockGranted::Reader g) {
                                                    got = g.getTid();
                                                    return Status::OK();
                                                  });
    return got == tid;
  }
  void goodbye() {
    capnp::MallocMessageBuilder b;
    b.initRoot<fsproto::Goodbye>().setReason("test done");
    srv_.handle(link_, msg::make_message(fsproto::MSG_GOODBYE, b));
  }
  const std::shared_ptr<Inbox> &link() const { return link_; }

 private:
  MdsServer &srv_;
  std::shared_ptr<Inbox> link_;
  std::string name_;
  uint64_t session_ = 0;
  uint64_t tid_ = 0;
  std::pair<Ino, uint64_t> delegated_{0, 0};
  uint32_t inline_max_ = 0;
};

}  // namespace strata::mds::test
