// The MDS server core on an in-memory store, driven through its dispatch by
// protocol-level test clients (mds_test_client.h): namespace semantics and
// errors, unsafe/safe replies, replay dedup, lease revocation and expiry,
// locks across sessions, and a tiny cache.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <memory>
#include <thread>

#include "mds/memory_meta_store.h"
#include "mds_test_client.h"

namespace strata::mds::test {
namespace {

using fsproto::LeaseKind;
using fsproto::LockType;

struct Fixture {
  explicit Fixture(MdsServerOptions o = {}) : log(STRATA_LOG_WARN) {
    o.fs_name = "fs";
    o.data_pool = 7;
    o.on_fenced = [this](const Status &) { fenced = true; };
    server = std::make_unique<MdsServer>(store, o, log);
    REQUIRE(server->start(1).ok());
  }
  ~Fixture() {
    (void)server->stop();
    server.reset();
    store.close();
  }
  MemoryMetaStore store;
  Logger log;
  std::atomic<bool> fenced{false};
  std::unique_ptr<MdsServer> server;
};

MdsServerOptions short_leases(uint64_t ms) {
  MdsServerOptions o;
  o.lease_ms = ms;
  return o;
}

// Root's session and user 1000's, over a root directory open to all.
struct RootAndUser {
  Fixture f;
  TestClient root{*f.server, "root"};
  TestClient u{*f.server, "user"};
  explicit RootAndUser(bool root_inline = false) {
    root.supports_inline = root_inline;
    REQUIRE(root.hello().first == 0);
    u.uid = 1000;
    u.gid = 1000;
    REQUIRE(u.hello().first == 0);
    REQUIRE(root.chmod(kRootIno, 0777).result == 0);
  }
};

TEST_CASE("mds server: create, lookup, readdir and their errors", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  auto d = a.mkdir(kRootIno, "d");
  REQUIRE(d.result == 0);
  Ino dir = d.inode->ino;
  CHECK(d.inode->type == FileType::kDirectory);
  CHECK(d.inode->nlink == 2);
  CHECK(d.parent->nlink == 3);
  for (const char *n : {"b", "c", "a"}) REQUIRE(a.create(dir, n).result == 0);
  CHECK(a.create(dir, "a").result == -EEXIST);
  CHECK(a.create(dir, "a", false).result == 0);  // open-create of an existing file
  CHECK(a.mkdir(dir, "a").result == -EEXIST);
  CHECK(a.create(dir, std::string(256, 'x')).result == -ENAMETOOLONG);
  CHECK(a.create(dir, std::string(255, 'x')).result == 0);
  CHECK(a.lookup(dir, "nope").result == -ENOENT);
  auto l = a.lookup(dir, "b");
  REQUIRE(l.result == 0);
  CHECK(l.inode->type == FileType::kRegular);
  CHECK(l.inode->mode == 0644);
  CHECK(l.inode->data_pool == 7);
  REQUIRE(!l.leases.empty());
  CHECK(l.leases[0].kind == LeaseKind::DIR_READ);
  CHECK(a.create(l.inode->ino, "x").result == -ENOTDIR);

  auto r1 = a.readdir(dir, "", 2);
  REQUIRE(r1.result == 0);
  REQUIRE(r1.entries.size() == 2);
  CHECK(r1.entries[0].first == "a");
  CHECK(r1.entries[1].first == "b");
  CHECK(!r1.end);
  CHECK(r1.entries[1].second.ino == l.inode->ino);  // readdirplus: inodes inline
  auto r2 = a.readdir(dir, "b", 10);
  REQUIRE(r2.entries.size() == 2);
  CHECK(r2.entries[0].first == "c");
  CHECK(r2.end);
  REQUIRE(!r2.leases.empty());
  CHECK(r2.leases[0].complete);  // the whole directory was read under the lease
}

TEST_CASE("mds server: unlink, rmdir, rename and link semantics", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  Ino d1 = a.mkdir(kRootIno, "d1").inode->ino;
  Ino d2 = a.mkdir(kRootIno, "d2").inode->ino;
  Ino sub = a.mkdir(d1, "sub").inode->ino;
  Ino f1 = a.create(d1, "f1").inode->ino;
  a.create(d2, "f2");

  CHECK(a.unlink(kRootIno, "d1").result == -EISDIR);
  CHECK(a.unlink(d1, "f1", true).result == -ENOTDIR);
  CHECK(a.unlink(kRootIno, "d1", true).result == -ENOTEMPTY);
  CHECK(a.unlink(d1, "nope").result == -ENOENT);

  // A directory cannot move into its own subtree.
  CHECK(a.rename(kRootIno, "d1", sub, "x").result == -EINVAL);
  CHECK(a.rename(kRootIno, "d1", d1, "x").result == -EINVAL);
  // Over an existing file: the old one loses its link and is purged.
  auto rn = a.rename(d1, "f1", d2, "f2");
  REQUIRE(rn.result == 0);
  REQUIRE(rn.replaced);
  CHECK(rn.replaced->nlink == 0);
  CHECK(a.lookup(d1, "f1").result == -ENOENT);
  CHECK(a.lookup(d2, "f2").inode->ino == f1);
  CHECK(f.store.purges().size() == 1);
  // NOREPLACE and EXCHANGE.
  a.create(d1, "g");
  CHECK(a.rename(d1, "g", d2, "f2", 1).result == -EEXIST);
  Ino g = a.lookup(d1, "g").inode->ino;
  REQUIRE(a.rename(d1, "g", d2, "f2", 2).result == 0);
  CHECK(a.lookup(d1, "g").inode->ino == f1);
  CHECK(a.lookup(d2, "f2").inode->ino == g);
  CHECK(a.rename(d1, "none", d2, "x", 2).result == -ENOENT);
  // Directory over a file / file over a directory; dir over a non-empty dir.
  CHECK(a.rename(d1, "sub", d2, "f2").result == -ENOTDIR);
  CHECK(a.rename(d2, "f2", d1, "sub").result == -EISDIR);
  a.mkdir(d2, "full");
  a.create(a.lookup(d2, "full").inode->ino, "inside");
  CHECK(a.rename(d1, "sub", d2, "full").result == -ENOTEMPTY);
  // A directory across parents: the link counts follow.
  auto mv = a.rename(d1, "sub", d2, "sub2");
  REQUIRE(mv.result == 0);
  CHECK(a.getattr(d1).inode->nlink == 2);
  CHECK(a.getattr(d2).inode->nlink == 4);
  CHECK(a.lookup(d2, "sub2").inode->ino == sub);
  // and its subtree check follows the move.
  CHECK(a.rename(d2, "sub2", sub, "x").result == -EINVAL);

  // Hard links: not to directories; two names, one inode, nlink counted.
  CHECK(a.link(d1, d2, "dl").result == -EPERM);
  auto ln = a.link(f1, d2, "hard");
  REQUIRE(ln.result == 0);
  CHECK(ln.inode->nlink == 2);
  CHECK(a.lookup(d2, "hard").inode->ino == f1);
  CHECK(a.lookup(d1, "g").inode->nlink == 2);
  CHECK(a.link(f1, d2, "hard").result == -EEXIST);
  REQUIRE(a.unlink(d1, "g").result == 0);
  CHECK(a.lookup(d2, "hard").inode->nlink == 1);
  CHECK(a.getattr(f1).inode->nlink == 1);
  REQUIRE(a.unlink(d2, "hard").result == 0);
  CHECK(a.lookup(d2, "hard").result == -ENOENT);
  CHECK(a.unlink(d2, "full", true).result == -ENOTEMPTY);
}

TEST_CASE("mds server: setattr permissions and xattrs", "[mds]") {
  RootAndUser ru;
  auto &root = ru.root;
  auto &u = ru.u;
  Ino mine = u.create(kRootIno, "mine").inode->ino;
  Ino roots = root.create(kRootIno, "roots").inode->ino;
  CHECK(u.getattr(mine).inode->uid == 1000);
  CHECK(u.chmod(roots, 0777).result == -EPERM);
  CHECK(u.chmod(mine, 0600).result == 0);
  CHECK(u.getattr(mine).inode->mode == 0600);
  CHECK(u.chown(mine, 0).result == -EPERM);
  CHECK(root.chown(mine, 2000).result == 0);
  CHECK(root.getattr(mine).inode->uid == 2000);

  CHECK(u.setxattr(roots, "user.a", "1").result == -EACCES);
  CHECK(root.setxattr(roots, "user.a", "1", 2).result == -ENODATA);  // XATTR_REPLACE
  CHECK(root.setxattr(roots, "user.a", "1").result == 0);
  CHECK(root.setxattr(roots, "user.a", "2", 1).result == -EEXIST);  // XATTR_CREATE
  CHECK(root.getattr(roots).inode->xattrs.at("user.a") == "1");
  CHECK(root.removexattr(roots, "user.b").result == -ENODATA);
  CHECK(root.setxattr(roots, "user.big", std::string(40000, 'x')).result == 0);
  CHECK(root.setxattr(roots, "user.big2", std::string(30000, 'x')).result == -ENOSPC);
  CHECK(root.removexattr(roots, "user.big").result == 0);
  CHECK(root.setxattr(roots, "user.big2", std::string(30000, 'x')).result == 0);
  CHECK(root.getattr(roots).inode->xattrs.size() == 2);
}

TEST_CASE("mds server: set-id bits go as Linux drops them: chown, and a writer's kill", "[mds]") {
  RootAndUser ru;
  auto &root = ru.root;
  auto &u = ru.u;
  auto file = [&](const char *name, uint32_t mode) {
    Ino ino = root.create(kRootIno, name).inode->ino;
    REQUIRE(root.chmod(ino, mode).result == 0);
    return ino;
  };
  auto kill = [&](TestClient &c, Ino ino, uint32_t extra = 0) {
    return c.call([&](auto r) {
      auto q = r.initSetattr();
      q.setIno(ino);
      q.initAttr().setMask(fsproto::SetAttr::MASK_KILL_SUIDGID | extra);
    });
  };
  // chown: S_ISUID always, S_ISGID only with group execute.
  Ino c1 = file("c1", 06755), c2 = file("c2", 02745);
  REQUIRE(root.chown(c1, 5).result == 0);
  REQUIRE(root.chown(c2, 5).result == 0);
  CHECK(root.getattr(c1).inode->mode == 0755);
  CHECK(root.getattr(c2).inode->mode == 02745);
  // A writer that does not own the file may kill (not chmod): S_ISUID, and
  // S_ISGID when the group may execute or the writer is not in the group.
  Ino w1 = file("w1", 04777), w2 = file("w2", 02777), w3 = file("w3", 02767);
  CHECK(u.chmod(w1, 0777).result == -EPERM);
  CHECK(kill(u, w1).result == 0);
  CHECK(kill(u, w2).result == 0);
  CHECK(kill(u, w3).result == 0);
  CHECK(root.getattr(w1).inode->mode == 0777);
  CHECK(root.getattr(w2).inode->mode == 0777);
  CHECK(root.getattr(w3).inode->mode == 0767);
  // Root (in every group) keeps S_ISGID without group execute.
  Ino w4 = file("w4", 06767);
  CHECK(kill(root, w4).result == 0);
  CHECK(root.getattr(w4).inode->mode == 02767);
  // A writer's truncate may carry its mtime (the kernel's writeback cache
  // sends it as a value); without write permission, nothing goes.
  Ino t = file("t", 04666);
  CHECK(u.call([&](auto r) {
           auto q = r.initSetattr();
           q.setIno(t);
           auto a = q.initAttr();
           a.setMask(fsproto::SetAttr::MASK_SIZE | fsproto::SetAttr::MASK_MTIME |
                     fsproto::SetAttr::MASK_KILL_SUIDGID);
           a.setSize(3);
           a.initMtime().setSec(1234);
         }).result == 0);
  auto after = root.getattr(t).inode;
  CHECK(after->mode == 0666);
  CHECK(after->size == 3);
  CHECK(after->mtime.sec == 1234);
  Ino ro = file("ro", 04644);
  CHECK(kill(u, ro, fsproto::SetAttr::MASK_SIZE).result == -EACCES);
  CHECK(root.getattr(ro).inode->mode == 04644);
}

TEST_CASE("mds server: unsafe reply first, safe once durable, fsync waits", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  f.store.hold_durability(true);
  uint64_t tid = a.send([](auto r) {
    TestClient::fill_create(r, kRootIno, "f", fsproto::FileType::REGULAR, 0644, true);
  });
  auto first = a.reply(tid);
  REQUIRE(first);
  CHECK(first->unsafe);
  CHECK(!first->safe);
  uint64_t fs = a.send([](auto r) { r.initFsync().setIno(0); });
  CHECK(!a.reply(tid, std::chrono::milliseconds(100)));
  CHECK(!a.reply(fs, std::chrono::milliseconds(0)));
  // A read is answered at once, and sees the unsafe change.
  CHECK(a.lookup(kRootIno, "f").result == 0);
  f.store.hold_durability(false);
  auto safe = a.reply(tid);
  REQUIRE(safe);
  CHECK(safe->safe);
  CHECK(safe->inode->ino == first->inode->ino);
  auto fsync = a.reply(fs);
  REQUIRE(fsync);
  CHECK(fsync->result == 0);
}

TEST_CASE("mds server: replays are answered once, also after a failover", "[mds]") {
  MemoryMetaStore store;
  Logger log(STRATA_LOG_WARN);
  uint64_t session = 0, tid = 0;
  Ino ino = 0;
  {
    MdsServer srv(store, {}, log);
    REQUIRE(srv.start(1).ok());
    TestClient a(srv, "a");
    REQUIRE(a.hello().first == 0);
    session = a.session();
    auto c = a.create(kRootIno, "once");
    REQUIRE(c.result == 0);
    ino = c.inode->ino;
    tid = c.tid;
    // A resend on the same MDS: the recorded reply, not a second create.
    uint64_t again = a.send(
        [](auto r) {
          TestClient::fill_create(r, kRootIno, "once", fsproto::FileType::REGULAR, 0644, true);
        },
        tid, true);
    auto dup = a.reply(again);
    REQUIRE(dup);
    CHECK(dup->result == 0);
    CHECK(dup->inode->ino == ino);
    REQUIRE(srv.stop().ok());
  }
  // A new incarnation on the same store: the session resumes.
  MdsServer srv2(store, {}, log);
  REQUIRE(srv2.start(2).ok());
  TestClient a2(srv2, "a");
  auto [err, committed] = a2.hello(session);
  REQUIRE(err == 0);
  CHECK(committed == tid);
  uint64_t t = a2.send(
      [](auto r) {
        TestClient::fill_create(r, kRootIno, "once", fsproto::FileType::REGULAR, 0644, true);
      },
      tid, true);
  auto r = a2.reply(t);
  REQUIRE(r);
  CHECK(r->result == 0);  // not EEXIST: it was already applied
  CHECK(a2.readdir(kRootIno).entries.size() == 1);
  TestClient stranger(srv2, "b");
  CHECK(stranger.hello(999999).first == -ESTALE);
  REQUIRE(srv2.stop().ok());
}

TEST_CASE("mds server: a change in a leased directory revokes first", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  Ino dir = a.mkdir(kRootIno, "shared").inode->ino;
  auto listing = a.readdir(dir);
  REQUIRE(listing.leases.size() == 1);
  uint64_t seq = listing.leases[0].seq;

  uint64_t tid = b.send([&](auto r) {
    TestClient::fill_create(r, dir, "new", fsproto::FileType::REGULAR, 0644, true);
  });
  auto rv = a.revoke();
  REQUIRE(rv);
  REQUIRE(rv->size() == 1);
  CHECK((*rv)[0].first == dir);
  CHECK(!b.reply(tid, std::chrono::milliseconds(0)));  // B waits for A's release
  // B's reads of other things are not held up... but its own later requests stay in order.
  a.release({{dir, seq}});
  auto r = b.reply(tid);
  REQUIRE(r);
  CHECK(r->result == 0);
  // A's own changes never revoke its own lease.
  auto again = a.readdir(dir);
  REQUIRE(again.leases.size() == 1);
  REQUIRE(a.create(dir, "mine").result == 0);
  CHECK(!a.revoke(std::chrono::milliseconds(0)));
}

TEST_CASE("mds server: a silent lease holder holds others up only until expiry", "[mds]") {
  Fixture f(short_leases(200));
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  Ino dir = a.mkdir(kRootIno, "d").inode->ino;
  REQUIRE(a.readdir(dir).leases.size() == 1);
  uint64_t tid = b.send([&](auto r) {
    TestClient::fill_create(r, dir, "x", fsproto::FileType::REGULAR, 0644, true);
  });
  REQUIRE(a.revoke());  // and A never answers
  auto r = b.reply(tid);
  REQUIRE(r);
  CHECK(r->result == 0);
}

// Regression (fs_e2e git/rm -rf): a lease that ran out but was not swept
// yet was renewed under its old seq, still `complete`, although others had
// changed the directory meanwhile without a revoke: the client kept serving
// its stale listing.
TEST_CASE("mds server: a lapsed directory lease is granted anew, not renewed", "[mds]") {
  Fixture f(short_leases(100));
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  Ino dir = a.mkdir(kRootIno, "d").inode->ino;
  auto listing = a.readdir(dir);
  REQUIRE(listing.leases.size() == 1);
  REQUIRE(listing.leases[0].complete);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // A's lease lapses
  REQUIRE(b.create(dir, "x").result == 0);                      // no revoke needed
  auto look = a.lookup(dir, "x");
  REQUIRE(look.result == 0);
  REQUIRE(look.leases.size() == 1);
  CHECK(look.leases[0].seq != listing.leases[0].seq);
  CHECK_FALSE(look.leases[0].complete);
}

TEST_CASE("mds server: open files revoke writers, unlinked open files purge on close", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  Ino ino = a.create(kRootIno, "f").inode->ino;
  auto wr = a.open(ino, O_RDWR, LeaseKind::FILE_WRITE);
  REQUIRE(wr.result == 0);
  REQUIRE(wr.leases.size() == 1);
  uint64_t tid = b.send([&](auto r) {
    auto q = r.initOpen();
    q.setIno(ino);
    q.setFlags(O_RDONLY);
    q.setWantLease(LeaseKind::FILE_READ);
  });
  REQUIRE(a.revoke());
  // A flushes its size with the release; B's open sees it.
  {
    capnp::MallocMessageBuilder mb;
    auto rel = mb.initRoot<fsproto::Release>();
    auto ls = rel.initLeases(1);
    ls[0].setIno(ino);
    ls[0].setSeq(wr.leases[0].seq);
    auto fl = rel.initFlushed(1);
    fl[0].setIno(ino);
    fl[0].initAttr().setMask(fsproto::SetAttr::MASK_SIZE);
    fl[0].getAttr().setSize(12345);
    f.server->handle(a.link(), msg::make_message(fsproto::MSG_RELEASE, mb));
  }
  auto r = b.reply(tid);
  REQUIRE(r);
  REQUIRE(r->result == 0);
  CHECK(r->inode->size == 12345);
  REQUIRE(r->leases.size() == 1);
  // B has it open; A unlinks it: to the stray directory, purged at B's close.
  REQUIRE(a.unlink(kRootIno, "f").result == 0);
  CHECK(f.store.purges().empty());
  b.release({{ino, r->leases[0].seq}});
  f.store.flush();
  REQUIRE(f.store.purges().size() == 1);
  CHECK(f.store.purges()[0].ino == ino);
  CHECK(f.store.purges()[0].size == 12345);
}

TEST_CASE(
    "mds server: a file whose writer died holding fileWrite is purged as if it had "
    "objects",
    "[mds]") {
  // A client may move a file from inline to its objects (or grow one in
  // objects) and die before it reports that: the purge must still remove
  // object 0 (one object past the known end of a file in objects).
  Fixture f(short_leases(300));
  TestClient a(*f.server, "a"), b(*f.server, "b"), live(*f.server, "live");
  a.supports_inline = true;
  live.supports_inline = true;
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  REQUIRE(live.hello().first == 0);
  auto c = a.create_inline(kRootIno, "moved");
  REQUIRE(c.result == 0);
  REQUIRE(c.inode->data_inline);
  const Ino moved = c.inode->ino;
  REQUIRE(a.open(moved, O_RDWR, LeaseKind::FILE_WRITE).result == 0);
  // The same for a file a live client wrote: its lease lapses, nothing else.
  auto lc = live.create_inline(kRootIno, "kept");
  REQUIRE(lc.result == 0);
  REQUIRE(live.open(lc.inode->ino, O_RDWR, LeaseKind::FILE_WRITE).result == 0);
  f.server->link_closed(a.link());  // a dies
  // Both go to the stray directory while their leases last, and are
  // purged (or not) when those run out.
  REQUIRE(b.unlink(kRootIno, "moved").result == 0);
  REQUIRE(b.unlink(kRootIno, "kept").result == 0);
  std::vector<PurgeRec> purges;
  for (int i = 0; i < 300 && purges.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    f.store.flush();
    purges = f.store.purges();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // "kept" lapses too
  f.store.flush();
  purges = f.store.purges();
  REQUIRE(purges.size() == 1);
  CHECK(purges[0].ino == moved);
  CHECK(purges[0].size > 0);  // object 0 at least
}

TEST_CASE("mds server: an unlink of a file its caller has closed purges at once", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  Ino one = a.create(kRootIno, "one").inode->ino;
  Ino two = a.create(kRootIno, "two").inode->ino;
  REQUIRE(a.open(one, O_RDWR, LeaseKind::FILE_WRITE).result == 0);
  REQUIRE(a.open(two, O_RDWR, LeaseKind::FILE_WRITE).result == 0);
  // Without the flag the lease keeps the file (in the stray directory).
  REQUIRE(a.unlink(kRootIno, "one").result == 0);
  f.store.flush();
  CHECK(f.store.purges().empty());
  // With it, the caller's own lease goes with the link.
  REQUIRE(a.unlink(kRootIno, "two", false, true).result == 0);
  f.store.flush();
  REQUIRE(f.store.purges().size() == 1);
  CHECK(f.store.purges()[0].ino == two);
  // Another session's lease still keeps a file until it lets go.
  Ino three = a.create(kRootIno, "three").inode->ino;
  auto rd = b.open(three, O_RDONLY, LeaseKind::FILE_READ);
  REQUIRE(rd.result == 0);
  REQUIRE(rd.leases.size() == 1);
  REQUIRE(a.unlink(kRootIno, "three", false, true).result == 0);
  f.store.flush();
  CHECK(f.store.purges().size() == 1);
  b.release({{three, rd.leases[0].seq}});
  f.store.flush();
  REQUIRE(f.store.purges().size() == 2);
  CHECK(f.store.purges()[1].ino == three);
}

TEST_CASE("mds server: a create's folded setattr (Create.then) applies as if it came next",
          "[mds]") {
  using SA = fsproto::SetAttr;
  RootAndUser ru(/*root_inline=*/true);
  auto &root = ru.root;
  auto &u = ru.u;
  auto create_then = [&](TestClient &c, const char *name, bool excl, uint32_t mask, uint32_t mode,
                         uint32_t uid) {
    return c.call([&](auto r) {
      r.initTime().setSec(500);
      TestClient::fill_create(r, kRootIno, name, fsproto::FileType::REGULAR, 0644, excl);
      auto t = r.getCreate().initThen();
      t.setMask(mask);
      t.setMode(mode);
      t.setUid(uid);
      t.setGid(uid);
      t.initMtime().setSec(7);
      t.initCtime().setSec(600);
    });
  };
  // A user's chmod of its own new file; its chown to someone else fails
  // whole (the client folds only root's chowns, so this is a bad client).
  auto b = create_then(u, "b", true, SA::MASK_MODE | SA::MASK_CTIME, 0600, 0);
  REQUIRE(b.result == 0);
  CHECK(root.getattr(b.inode->ino).inode->mode == 0600);
  CHECK(create_then(u, "c", true, SA::MASK_UID | SA::MASK_CTIME, 0, 5).result == -EPERM);
  CHECK(root.lookup(kRootIno, "c").result == -ENOENT);
  // tar as root: chown, then chmod with set-uid, then times.
  auto a = create_then(
      root, "a", true,
      SA::MASK_UID | SA::MASK_GID | SA::MASK_MODE | SA::MASK_MTIME | SA::MASK_CTIME, 04750, 5);
  REQUIRE(a.result == 0);
  auto in = root.getattr(a.inode->ino).inode;
  CHECK(in->mode == 04750);
  CHECK(in->uid == 5);
  CHECK(in->gid == 5);
  CHECK(in->mtime.sec == 7);
  CHECK(in->ctime.sec == 600);
  CHECK(in->btime.sec == 500);  // the create's own time
  CHECK(in->atime.sec == 500);
  CHECK(root.lookup(kRootIno, "a").inode->mode == 04750);
  // Only exclusive creates, and only mode, owner and times.
  CHECK(create_then(root, "d", false, SA::MASK_MODE, 0600, 0).result == -EINVAL);
  CHECK(create_then(root, "e", true, SA::MASK_ATIME_NOW, 0, 0).result == -EINVAL);
  CHECK(create_then(root, "f", true, SA::MASK_MTIME_NOW, 0, 0).result == -EINVAL);
  CHECK(root.lookup(kRootIno, "d").result == -ENOENT);
  CHECK(root.lookup(kRootIno, "e").result == -ENOENT);
  // A closed small file's size report rides along: its bytes inline, but
  // only into a create that starts inline.
  auto with_bytes = [&](const char *name, bool inline_create) {
    return root.call([&](auto r) {
      r.initTime().setSec(500);
      TestClient::fill_create(r, kRootIno, name, fsproto::FileType::REGULAR, 0644, true);
      r.getCreate().setDataInline(inline_create);
      auto t = r.getCreate().initThen();
      t.setMask(SA::MASK_SIZE | SA::MASK_INLINE | SA::MASK_MTIME | SA::MASK_CTIME);
      t.setSize(5);
      t.setDataInline(true);
      t.setInlineData(capnp::Data::Reader(reinterpret_cast<const capnp::byte *>("hello"), 5));
      t.initMtime().setSec(9);
      t.initCtime().setSec(9);
    });
  };
  auto g = with_bytes("g", true);
  REQUIRE(g.result == 0);
  auto gi = root.getattr(g.inode->ino).inode;
  CHECK(gi->size == 5);
  CHECK(gi->inline_data == "hello");
  CHECK(gi->mtime.sec == 9);
  CHECK(with_bytes("h", false).result == -EINVAL);
  CHECK(root.lookup(kRootIno, "h").result == -ENOENT);
}

TEST_CASE("mds server: a full cluster: what takes space fails with ENOSPC, the rest goes on",
          "[mds]") {
  auto full = std::make_shared<std::atomic<bool>>(false);
  MdsServerOptions o;
  o.full = [full] { return *full ? std::string("osd.1 is full") : std::string(); };
  Fixture f(o);
  TestClient c(*f.server, "c");
  c.supports_inline = true;
  REQUIRE(c.hello().first == 0);
  Ino small = c.create_inline(kRootIno, "small").inode->ino;
  REQUIRE(c.report_data(small, 3, std::string("abc")).result == 0);
  Ino dir = c.mkdir(kRootIno, "d").inode->ino;
  CHECK_FALSE(c.getattr(small).cluster_full);

  *full = true;
  auto r = c.create(kRootIno, "new");
  CHECK(r.result == -ENOSPC);
  CHECK(r.cluster_full);
  CHECK(r.message.find("osd.1 is full") != std::string::npos);
  CHECK(c.mkdir(kRootIno, "d2").result == -ENOSPC);
  CHECK(c.link(small, dir, "hard").result == -ENOSPC);
  CHECK(c.setxattr(small, "user.a", "1").result == -ENOSPC);
  CHECK(c.report_data(small, 6, std::string("abcdef")).result == -ENOSPC);
  CHECK(c.lookup(kRootIno, "new").result == -ENOENT);
  // What frees space or takes none: shrinking, chmod, rename, unlink, and
  // opening a file that is there (a create of an existing name).
  CHECK(c.report_data(small, 2, std::string("ab")).result == 0);
  CHECK(c.chmod(small, 0600).result == 0);
  CHECK(c.create(kRootIno, "small", false).result == 0);
  CHECK(c.rename(kRootIno, "small", dir, "moved").result == 0);
  auto u = c.unlink(dir, "moved");
  CHECK(u.result == 0);
  CHECK(u.cluster_full);

  *full = false;
  auto again = c.create(kRootIno, "new");
  CHECK(again.result == 0);
  CHECK_FALSE(again.cluster_full);
}

TEST_CASE("mds server: inline data starts with the create, follows size reports, never returns",
          "[mds]") {
  // mds_inline_data_max: the default, 16 KiB. Short leases: `legacy`'s
  // reads wait for a's fileWrite, which a (a test client) never releases.
  Fixture f(short_leases(300));
  TestClient a(*f.server, "a"), legacy(*f.server, "legacy");
  a.supports_inline = true;
  REQUIRE(a.hello().first == 0);
  REQUIRE(legacy.hello().first == 0);
  CHECK(a.inline_max() == 16384);
  CHECK(legacy.inline_max() == 0);

  auto c = a.create_inline(kRootIno, "small");
  REQUIRE(c.result == 0);
  REQUIRE(c.inode->data_inline);
  CHECK(c.inode->inline_data.empty());
  const Ino small = c.inode->ino;
  // Asked for by a session that does not support it: in objects.
  auto lc = legacy.create_inline(kRootIno, "legacy");
  REQUIRE(lc.result == 0);
  CHECK_FALSE(lc.inode->data_inline);
  // Not asked for: in objects too.
  CHECK_FALSE(a.create(kRootIno, "plain").inode->data_inline);

  REQUIRE(a.open(small, O_RDWR, LeaseKind::FILE_WRITE).result == 0);
  auto r = a.report_data(small, 11, std::string("hello world"));
  REQUIRE(r.result == 0);
  CHECK(r.inode->inline_data == "hello world");
  CHECK(r.inode->size == 11);
  auto l = a.lookup(kRootIno, "small");
  REQUIRE(l.result == 0);
  CHECK(l.inode->inline_data == "hello world");
  // A truncate cuts the bytes; growing again reads zeros after them.
  CHECK(a.truncate(small, 5).inode->inline_data == "hello");
  auto up = a.truncate(small, 100);
  CHECK(up.inode->inline_data == "hello");
  CHECK(up.inode->size == 100);
  // Bytes past the size are not kept.
  CHECK(a.report_data(small, 3, std::string("abcdef")).inode->inline_data == "abc");

  // A client that knows nothing of inline data cannot open or cut it.
  CHECK(legacy.open(small, O_RDONLY, LeaseKind::FILE_READ).result == -EOPNOTSUPP);
  CHECK(legacy.truncate(small, 0).result == -EOPNOTSUPP);
  // Its bytes are written as its size is: with write permission only.
  a.uid = 1000;
  auto denied = a.call([&](auto r) {
    auto q = r.initSetattr();
    q.setIno(small);
    auto at = q.initAttr();
    at.setMask(fsproto::SetAttr::MASK_INLINE);  // no size: the bytes alone
    at.setDataInline(true);
    at.setInlineData(data("xyz"));
  });
  CHECK(denied.result == -EACCES);
  a.uid = 0;
  // Whoever made it: more than the hard limit is refused.
  CHECK(a.report_data(small, 1 << 20, std::string(kInlineDataHardMax + 1, 'x')).result == -EFBIG);
  CHECK(a.lookup(kRootIno, "small").inode->inline_data == "abc");

  // Into objects (the client wrote them first), and never back.
  auto obj = a.report_data(small, 1 << 20, std::nullopt);
  REQUIRE(obj.result == 0);
  CHECK_FALSE(obj.inode->data_inline);
  CHECK(obj.inode->inline_data.empty());
  CHECK(a.report_data(small, 3, std::string("abc")).result == -EINVAL);
  auto lo = legacy.open(small, O_RDONLY, LeaseKind::FILE_READ);
  REQUIRE(lo.result == 0);
  REQUIRE(lo.leases.size() == 1);
  legacy.release({{small, lo.leases[0].seq}});

  // An inline file has no data objects to purge; one in objects has.
  auto tiny = a.create_inline(kRootIno, "tiny");
  REQUIRE(tiny.result == 0);
  REQUIRE(a.report_data(tiny.inode->ino, 2, std::string("hi")).result == 0);
  REQUIRE(a.unlink(kRootIno, "tiny", false, true).result == 0);
  f.store.flush();
  CHECK(f.store.purges().empty());
  REQUIRE(a.unlink(kRootIno, "small", false, true).result == 0);
  f.store.flush();
  REQUIRE(f.store.purges().size() == 1);
  CHECK(f.store.purges()[0].ino == small);

  // A directory of full inline files is listed in pages that fit a message.
  Ino dir = a.mkdir(kRootIno, "many").inode->ino;
  for (int i = 0; i < 600; ++i) {
    auto fc = a.create_inline(dir, "f" + std::to_string(i));
    REQUIRE(fc.result == 0);
    REQUIRE(a.report_data(fc.inode->ino, 4096, std::string(4096, char('a' + i % 26))).result == 0);
  }
  size_t listed = 0, pages = 0;
  std::string after;
  for (bool end = false; !end; ++pages) {
    auto page = a.readdir(dir, after, 1024);
    REQUIRE(page.result == 0);
    REQUIRE_FALSE(page.entries.empty());
    for (auto &[name, in] : page.entries) CHECK(in.inline_data.size() == 4096);
    listed += page.entries.size();
    after = page.entries.back().first;
    end = page.end;
  }
  CHECK(listed == 600);
  CHECK(pages >= 3);  // 2.4 MiB of inline bytes, at most ~1 MiB a page
}

TEST_CASE("mds server: locks across sessions, waiting locks granted on unlock", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello().first == 0);
  REQUIRE(b.hello().first == 0);
  Ino ino = a.create(kRootIno, "locked").inode->ino;
  uint64_t t1 = a.send_setlock(ino, LockType::WRITE, 0, 100, false);
  REQUIRE(a.reply(t1)->result == 0);
  uint64_t t2 = b.send_setlock(ino, LockType::WRITE, 50, 10, false);
  CHECK(b.reply(t2)->result == -EAGAIN);
  uint64_t t3 = b.send_setlock(ino, LockType::READ, 100, 10, false);  // no overlap
  CHECK(b.reply(t3)->result == 0);
  auto gl = b.getlock(ino, LockType::WRITE, 0, 0);
  CHECK(gl.lock_type == LockType::WRITE);
  CHECK(a.getlock(ino, LockType::WRITE, 0, 50).lock_type == LockType::UNLOCK);  // its own
  uint64_t wait = b.send_setlock(ino, LockType::WRITE, 0, 10, true);
  CHECK(!b.reply(wait, std::chrono::milliseconds(0)));
  uint64_t un = a.send_setlock(ino, LockType::UNLOCK, 0, 0, false);
  REQUIRE(a.reply(un)->result == 0);
  CHECK(b.lock_granted(wait));
  CHECK(b.reply(wait)->result == 0);
  // A session's locks go with it.
  uint64_t t4 = a.send_setlock(ino, LockType::WRITE, 0, 10, false);
  CHECK(a.reply(t4)->result == -EAGAIN);
  b.goodbye();
  uint64_t t5 = a.send_setlock(ino, LockType::WRITE, 0, 10, false);
  CHECK(a.reply(t5)->result == 0);
}

TEST_CASE("mds server: a tiny cache evicts and stays correct", "[mds]") {
  MdsServerOptions o;
  o.cache_limit_bytes = 4096;
  Fixture f(o);
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  std::vector<Ino> dirs;
  for (int d = 0; d < 5; ++d) dirs.push_back(a.mkdir(kRootIno, "d" + std::to_string(d)).inode->ino);
  for (int d = 0; d < 5; ++d)
    for (int i = 0; i < 40; ++i)
      REQUIRE(a.create(dirs[d], "f" + std::to_string(i), true, 0600 + i % 8).result == 0);
  REQUIRE(a.rename(dirs[0], "f1", dirs[4], "moved").result == 0);
  for (int d = 0; d < 5; ++d)
    for (int i = 0; i < 40; ++i) {
      auto l = a.lookup(dirs[d], "f" + std::to_string(i));
      if (d == 0 && i == 1) {
        CHECK(l.result == -ENOENT);
        continue;
      }
      REQUIRE(l.result == 0);
      CHECK(l.inode->mode == uint32_t(0600 + i % 8));
      CHECK(a.getattr(l.inode->ino).result == 0);
    }
  CHECK(a.lookup(dirs[4], "moved").result == 0);
  auto st = f.server->stats();
  CHECK(st.cache_bytes <= 4096);
  CHECK(st.cache_evictions > 0);
  CHECK(st.sessions == 1);
}

TEST_CASE("mds server: a directory made here answers new names and emptiness from its cache",
          "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  Ino d = a.mkdir(kRootIno, "d").inode->ino;
  uint64_t before = f.store.reads();
  // An untar's pattern: every name is new in a directory made just before.
  for (int i = 0; i < 50; ++i) REQUIRE(a.create(d, "f" + std::to_string(i)).result == 0);
  Ino sub = a.mkdir(d, "sub").inode->ino;
  CHECK(a.create(d, "f7").result == -EEXIST);
  CHECK(a.lookup(d, "nothing").result == -ENOENT);
  CHECK(a.unlink(kRootIno, "d", true).result == -ENOTEMPTY);
  CHECK(a.unlink(d, "sub", true).result == 0);
  CHECK(a.create(sub, "x").result != 0);  // gone
  for (int i = 0; i < 50; ++i) REQUIRE(a.unlink(d, "f" + std::to_string(i)).result == 0);
  CHECK(f.store.reads() == before);
  CHECK(a.unlink(kRootIno, "d", true).result == 0);
}

TEST_CASE("mds server: eviction ends a directory's completeness", "[mds]") {
  MdsServerOptions o;
  o.cache_limit_bytes = 4096;
  Fixture f(o);
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  Ino d = a.mkdir(kRootIno, "d").inode->ino;
  Ino e = a.mkdir(kRootIno, "e").inode->ino;
  REQUIRE(a.create(d, "keep").result == 0);
  // Enough entries elsewhere to push d's out of the tiny cache.
  for (int i = 0; i < 60; ++i) REQUIRE(a.create(e, "g" + std::to_string(i)).result == 0);
  uint64_t before = f.store.reads();
  CHECK(a.create(d, "keep").result == -EEXIST);
  CHECK(a.unlink(kRootIno, "d", true).result == -ENOTEMPTY);
  CHECK(f.store.reads() > before);  // asked the store: the cache no longer knows it all
}

TEST_CASE("mds server: fenced by a newer incarnation, it stops", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello().first == 0);
  f.store.fence();
  a.send([](auto r) {
    TestClient::fill_create(r, kRootIno, "late", fsproto::FileType::REGULAR, 0644, true);
  });
  f.store.flush();
  CHECK(f.fenced);
  CHECK(f.server->fenced());
}

// Asynchronous metadata (docs/FILESYSTEM.md): delegated inode numbers,
// dirWrite leases and Batches.

using Fill = TestClient::Fill;

Fill mkdir_at(Ino parent, const std::string &name, Ino ino) {
  return [=](fsproto::Request::Builder r) {
    TestClient::fill_create(r, parent, name, fsproto::FileType::DIRECTORY, 0755, true, ino);
  };
}
Fill create_at(Ino parent, const std::string &name, Ino ino) {
  return [=](fsproto::Request::Builder r) {
    TestClient::fill_create(r, parent, name, fsproto::FileType::REGULAR, 0644, true, ino);
  };
}

// The only reply for `tid` of a batched change: safe, never unsafe, alone.
ReplyView only_safe_reply(TestClient &c, uint64_t tid) {
  auto r = c.reply(tid);
  REQUIRE(r);
  CHECK(r->safe);
  CHECK_FALSE(r->unsafe);
  return *r;
}

const ReplyView::L *lease_on(const ReplyView &r, Ino ino) {
  for (const auto &l : r.leases)
    if (l.ino == ino) return &l;
  return nullptr;
}

TEST_CASE("mds server: an async Welcome delegates inode numbers, others get none", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello(0, true).first == 0);
  REQUIRE(b.hello().first == 0);
  auto [first, count] = a.delegated();
  CHECK(count == 1024);
  CHECK(first >= kFirstUserIno);
  CHECK(b.delegated().second == 0);
  // The range is journaled with the session, and the allocator moved past it.
  CHECK(f.store.sessions().at(a.session()).delegated_first == first);
  auto mk = b.mkdir(kRootIno, "d");
  CHECK(mk.leases.empty());  // no dirWrite on its new directory either
  Ino plain = mk.inode->ino;
  CHECK((plain < first || plain >= first + count));
  // A session without supportsAsync never gets dirWrite, even alone.
  auto l = b.lookup(plain, "x");
  REQUIRE(l.leases.size() == 1);
  CHECK(l.leases[0].kind == LeaseKind::DIR_READ);
  auto rd = b.readdir(plain);
  REQUIRE(rd.leases.size() == 1);
  CHECK(rd.leases[0].kind == LeaseKind::DIR_READ);
  // A resumed session gets a fresh range.
  TestClient a2(*f.server, "a");
  REQUIRE(a2.hello(a.session(), true).first == 0);
  CHECK(a2.delegated().second == 1024);
  CHECK(a2.delegated().first >= first + count);
}

TEST_CASE("mds server: a sole async session gets dirWrite, a shared directory dirRead", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello(0, true).first == 0);
  REQUIRE(b.hello().first == 0);
  Ino mine = b.mkdir(kRootIno, "mine").inode->ino;
  Ino shared = b.mkdir(kRootIno, "shared").inode->ino;
  auto l = a.lookup(mine, "x");
  CHECK(l.result == -ENOENT);
  REQUIRE(l.leases.size() == 1);
  CHECK(l.leases[0].kind == LeaseKind::DIR_WRITE);
  auto rd = a.readdir(mine);
  REQUIRE(lease_on(rd, mine));
  CHECK(lease_on(rd, mine)->kind == LeaseKind::DIR_WRITE);
  CHECK(lease_on(rd, mine)->complete);
  // RenewLeases renews it as any other lease.
  auto renewed = a.call([&](auto r) { r.initRenewLeases().initInos(1).set(0, mine); });
  REQUIRE(lease_on(renewed, mine));
  CHECK(lease_on(renewed, mine)->kind == LeaseKind::DIR_WRITE);

  REQUIRE(b.readdir(shared).leases.size() == 1);  // B holds dirRead on it
  auto l2 = a.lookup(shared, "x");
  REQUIRE(l2.leases.size() == 1);
  CHECK(l2.leases[0].kind == LeaseKind::DIR_READ);
  auto rd2 = a.readdir(shared);
  REQUIRE(rd2.leases.size() == 1);
  CHECK(rd2.leases[0].kind == LeaseKind::DIR_READ);
}

TEST_CASE("mds server: a batch applies in order with safe replies only, then revokes", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello(0, true).first == 0);
  REQUIRE(b.hello().first == 0);
  Ino r0 = a.delegated().first;
  Ino job = r0, f1 = r0 + 1, f2 = r0 + 2;
  f.store.hold_durability(true);
  auto tids =
      a.batch({mkdir_at(kRootIno, "job", job), create_at(job, "f1", f1), create_at(job, "f2", f2),
               [&](fsproto::Request::Builder r) {
                 auto q = r.initSetattr();
                 q.setIno(f1);
                 q.initAttr().setMask(fsproto::SetAttr::MASK_MODE);
                 q.getAttr().setMode(0600);
               },
               [&](fsproto::Request::Builder r) {
                 auto q = r.initUnlink();
                 q.setParent(job);
                 q.setName(data("f2"));
               },
               [&](fsproto::Request::Builder r) {
                 auto q = r.initRename();
                 q.setParent(job);
                 q.setName(data("f1"));
                 q.setNewParent(job);
                 q.setNewName(data("g"));
               }});
  REQUIRE(tids.size() == 6);
  // Nothing is durable yet: no reply at all (no unsafe ones).
  for (uint64_t t : tids) CHECK_FALSE(a.reply(t, std::chrono::milliseconds(20)));
  f.store.hold_durability(false);
  std::vector<ReplyView> rs;
  for (uint64_t t : tids) rs.push_back(only_safe_reply(a, t));
  for (const auto &r : rs) CHECK(r.result == 0);
  for (uint64_t t : tids) CHECK_FALSE(a.reply(t, std::chrono::milliseconds(0)));
  REQUIRE(rs[0].inode);
  CHECK(rs[0].inode->ino == job);
  const auto *dw = lease_on(rs[0], job);
  REQUIRE(dw);
  CHECK(dw->kind == LeaseKind::DIR_WRITE);
  CHECK(dw->complete);
  CHECK(rs[1].inode->ino == f1);
  CHECK(rs[3].inode->mode == 0600);

  // B looks inside: A's dirWrite is revoked first, B waits for the Release.
  uint64_t look = b.send([&](auto r) {
    auto q = r.initLookup();
    q.setParent(job);
    q.setName(data("g"));
  });
  auto rv = a.revoke();
  REQUIRE(rv);
  REQUIRE(rv->size() == 1);
  CHECK((*rv)[0].first == job);
  CHECK((*rv)[0].second == dw->seq);
  CHECK_FALSE(b.reply(look, std::chrono::milliseconds(50)));
  a.release(*rv);
  auto seen = b.reply(look);
  REQUIRE(seen);
  REQUIRE(seen->result == 0);
  CHECK(seen->inode->ino == f1);
  CHECK(seen->inode->mode == 0600);
  REQUIRE(seen->leases.size() == 1);
  CHECK(seen->leases[0].kind == LeaseKind::DIR_READ);
  CHECK(b.lookup(job, "f2").result == -ENOENT);
  CHECK(b.lookup(job, "f1").result == -ENOENT);
  auto listing = b.readdir(job);
  REQUIRE(listing.entries.size() == 1);
  CHECK(listing.entries[0].first == "g");
}

TEST_CASE("mds server: a waiting batched request keeps the session's order", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello(0, true).first == 0);
  REQUIRE(b.hello().first == 0);
  Ino e = b.mkdir(kRootIno, "e").inode->ino;
  auto listing = b.readdir(e);
  REQUIRE(listing.leases.size() == 1);
  uint64_t before = listing.inode->version;
  Ino r0 = a.delegated().first;
  auto tids = a.batch({create_at(e, "1", r0), create_at(e, "2", r0 + 1)});
  uint64_t look = a.send([&](auto r) { r.initGetattr().setIno(e); });
  auto rv = b.revoke();
  REQUIRE(rv);
  for (uint64_t t : tids) CHECK_FALSE(a.reply(t, std::chrono::milliseconds(20)));
  CHECK_FALSE(a.reply(look, std::chrono::milliseconds(0)));
  b.release(*rv);
  for (uint64_t t : tids) CHECK(only_safe_reply(a, t).result == 0);
  auto after = a.reply(look);
  REQUIRE(after);
  CHECK(after->inode->version == before + 2);  // both creates ran before it
  CHECK(after->inode->nlink == 2);
}

TEST_CASE("mds server: reading an inode inside a dirWrite directory revokes it", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello(0, true).first == 0);
  REQUIRE(b.hello().first == 0);
  Ino r0 = a.delegated().first;
  auto tids = a.batch({mkdir_at(kRootIno, "own", r0), create_at(r0, "f", r0 + 1)});
  auto mk = only_safe_reply(a, tids[0]);
  REQUIRE(lease_on(mk, r0));
  REQUIRE(only_safe_reply(a, tids[1]).result == 0);
  for (Ino target : {r0 + 1, r0}) {  // an inode inline in it, then the directory itself
    uint64_t t = b.send([&](auto r) { r.initGetattr().setIno(target); });
    auto rv = a.revoke();
    REQUIRE(rv);
    REQUIRE(rv->size() == 1);
    CHECK((*rv)[0].first == r0);
    CHECK_FALSE(b.reply(t, std::chrono::milliseconds(20)));
    a.release(*rv);
    auto got = b.reply(t);
    REQUIRE(got);
    CHECK(got->result == 0);
    CHECK(got->inode->ino == target);
    // A takes dirWrite again (nobody else holds a lease on it).
    auto again = a.lookup(r0, "f");
    REQUIRE(again.leases.size() == 1);
    CHECK(again.leases[0].kind == LeaseKind::DIR_WRITE);
  }
}

TEST_CASE("mds server: undelegated numbers are refused and ranges refilled", "[mds]") {
  MdsServerOptions o;
  o.delegate_inos = 8;
  Fixture f(o);
  TestClient a(*f.server, "a"), b(*f.server, "b");
  REQUIRE(a.hello(0, true).first == 0);
  REQUIRE(b.hello(0, true).first == 0);
  Ino r0 = a.delegated().first;
  REQUIRE(a.delegated().second == 8);
  auto create = [&](TestClient &c, const std::string &name, Ino ino) {
    return c.call([&](auto r) { create_at(kRootIno, name, ino)(r); });
  };
  auto bad = create(a, "theirs", b.delegated().first);
  CHECK(bad.result == -EINVAL);
  CHECK(bad.message.find("was not delegated to session") != std::string::npos);
  CHECK(create(a, "far", r0 + 100).result == -EINVAL);
  CHECK(create(a, "low", kRootIno).result == -EINVAL);
  // Half of the range used: no refill yet.
  for (Ino i = 0; i < 4; ++i) {
    auto r = create(a, "f" + std::to_string(i), r0 + i);
    REQUIRE(r.result == 0);
    CHECK(r.inode->ino == r0 + i);
    CHECK(r.delegated_count == 0);
  }
  CHECK(create(a, "again", r0).result == -EEXIST);  // a number is used once
  auto more = create(a, "f4", r0 + 4);              // more than half used
  REQUIRE(more.result == 0);
  REQUIRE(more.delegated_count == 8);
  Ino r1 = more.delegated_first;
  CHECK(r1 >= r0 + 8);
  CHECK(f.store.sessions().at(a.session()).delegated_first == r1);
  // The old range stays usable, and gives no second refill.
  auto old = create(a, "f7", r0 + 7);
  REQUIRE(old.result == 0);
  CHECK(old.delegated_count == 0);
  auto next = create(a, "n0", r1);
  REQUIRE(next.result == 0);
  CHECK(next.delegated_count == 0);
  // The MDS's own numbers never collide with delegated ones.
  Ino own = create(b, "plain", 0).inode->ino;
  CHECK((own < r1 || own >= r1 + 8));
  CHECK((own < r0 || own >= r0 + 8));
}

TEST_CASE("mds server: fsync after a batch waits for its safe replies", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello(0, true).first == 0);
  Ino r0 = a.delegated().first;
  f.store.hold_durability(true);
  auto tids = a.batch({create_at(kRootIno, "x", r0), create_at(kRootIno, "y", r0 + 1)});
  uint64_t fs = a.send([](auto r) { r.initFsync().setIno(0); });
  CHECK_FALSE(a.reply(fs, std::chrono::milliseconds(100)));
  f.store.hold_durability(false);
  for (uint64_t t : tids) CHECK(only_safe_reply(a, t).result == 0);
  auto done = a.reply(fs);
  REQUIRE(done);
  CHECK(done->result == 0);
}

TEST_CASE("mds server: an oversized batch is refused per request, a garbled one ignored", "[mds]") {
  Fixture f;
  TestClient a(*f.server, "a");
  REQUIRE(a.hello(0, true).first == 0);
  f.server->handle(a.link(), msg::Message{fsproto::MSG_BATCH, std::string("not capnp"), {}});
  CHECK_FALSE(
      a.inbox().take([](const msg::Message &) { return true; }, std::chrono::milliseconds(20)));
  std::vector<Fill> fills(4097,
                          [](fsproto::Request::Builder r) { r.initGetattr().setIno(kRootIno); });
  auto tids = a.batch(fills);
  for (uint64_t t : {tids.front(), tids.back()}) {
    auto r = a.reply(t);
    REQUIRE(r);
    CHECK(r->result == -E2BIG);
  }
  CHECK(a.readdir(kRootIno).entries.empty());
}

TEST_CASE("mds server: a replayed batch after a restart is answered once", "[mds]") {
  MemoryMetaStore store;
  Logger log(STRATA_LOG_WARN);
  uint64_t session = 0;
  std::vector<uint64_t> tids;
  Ino r0 = 0;
  std::vector<Fill> fills;
  {
    MdsServer srv(store, {}, log);
    REQUIRE(srv.start(1).ok());
    TestClient a(srv, "a");
    REQUIRE(a.hello(0, true).first == 0);
    session = a.session();
    r0 = a.delegated().first;
    fills = {mkdir_at(kRootIno, "d", r0), create_at(r0, "x", r0 + 1)};
    tids = a.batch(fills);
    for (uint64_t t : tids) REQUIRE(only_safe_reply(a, t).result == 0);
    REQUIRE(srv.stop().ok());
  }
  MdsServer srv2(store, {}, log);
  REQUIRE(srv2.start(2).ok());
  TestClient a2(srv2, "a");
  auto [err, committed] = a2.hello(session, true);
  REQUIRE(err == 0);
  CHECK(committed == tids.back());
  CHECK(a2.delegated().first >= r0 + 1024);  // never the old range again
  auto again = a2.batch(fills, tids, true);
  for (uint64_t t : again) CHECK(only_safe_reply(a2, t).result == 0);
  for (uint64_t t : again) CHECK_FALSE(a2.reply(t, std::chrono::milliseconds(20)));
  auto root = a2.readdir(kRootIno);
  REQUIRE(root.entries.size() == 1);
  CHECK(root.entries[0].second.ino == r0);
  auto inside = a2.readdir(r0);
  REQUIRE(inside.entries.size() == 1);
  CHECK(inside.entries[0].second.ino == r0 + 1);
  // A create replayed from before the takeover (not yet committed) may use
  // the old range; a fresh one outside any range may not.
  auto late = a2.batch({create_at(r0, "late", r0 + 2)}, {tids.back() + 50}, true);
  CHECK(only_safe_reply(a2, late[0]).result == 0);
  // (Tids of its own: the readdirs above took the next ones.)
  auto stray = a2.batch({create_at(r0, "stray", r0 + 3000)}, {tids.back() + 100});
  CHECK(only_safe_reply(a2, stray[0]).result == -EINVAL);
  REQUIRE(srv2.stop().ok());
}

}  // namespace
}  // namespace strata::mds::test
