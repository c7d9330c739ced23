// ObjectMetaStore against a real cluster (`strata up`, 3 OSDs): round
// trips, durability across a reopen, fencing, torn and corrupt journals,
// split directories, purges. Each test uses pools of its own.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/cluster_client.h"
#include "mds/fs_check.h"
#include "mds/object_meta_store.h"
#include "mds/store_names.h"
#include "process_cluster.h"

using namespace strata;
using namespace strata::mds;
using strata::testing::ProcessCluster;

namespace {

ProcessCluster &shared_cluster() {
  static ProcessCluster cluster(3);
  return cluster;
}

std::shared_ptr<client::ClusterClient> connect(ProcessCluster &pc) {
  client::ClusterArgs args;
  args.conf_path = pc.conf();
  auto c = client::ClusterClient::create(args);
  REQUIRE(c.ok());
  REQUIRE((*c)->connect(std::chrono::seconds(30)).ok());
  return *c;
}

uint32_t make_pool(ProcessCluster &pc, client::ClusterClient &c, const std::string &name) {
  std::string out;
  REQUIRE(pc.cli("pool create " + name + " --size 2 --min-size 1 --pg-num 4", &out) == 0);
  auto p = c.find_pool(name);
  REQUIRE(p.ok());
  return p->id;
}

DentryRec file_dentry(const std::string &name, Ino ino, uint64_t size = 0) {
  DentryRec d;
  d.name = name;
  d.ino = ino;
  d.type = FileType::kRegular;
  InodeRec in;
  in.ino = ino;
  in.type = FileType::kRegular;
  in.mode = 0644;
  in.size = size;
  in.xattrs["user.k"] = "v";
  d.inode = in;
  return d;
}

MetaUpdate create(Ino dir, const std::string &name, Ino ino) {
  MetaUpdate u;
  u.dentries.push_back(DentryChange{dir, name, file_dentry(name, ino)});
  u.ino_next = ino + 1;
  return u;
}

Status submit_sync(ObjectMetaStore &s, MetaUpdate u) {
  Status out;
  std::atomic<bool> done{false};
  s.submit(std::move(u), [&](Status st) {
    out = st;
    done = true;
  });
  Status flushed = s.flush();  // first: the callback has run once it returns
  REQUIRE(flushed.code() == out.code());
  REQUIRE(done);
  return out;
}

std::string name_of(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "f%05d", i);
  return buf;
}

// "kind object" of each problem fs check reported.
std::set<std::string> problem_kinds(const FsCheckReport &rep) {
  std::set<std::string> kinds;
  for (const auto &p : rep.problems) kinds.insert(p.kind + " " + p.object);
  return kinds;
}

}  // namespace

TEST_CASE("mds store: a new filesystem has the root and submits read back at once and once applied",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_rt");
  ObjectMetaStore s(c, pool);
  auto rs = s.open(1);
  REQUIRE(rs.ok());
  CHECK(rs->ino_next == kFirstUserIno);
  auto root = s.get_inode(kRootIno);
  REQUIRE(root.ok());
  REQUIRE(root->has_value());
  CHECK((*root)->type == FileType::kDirectory);
  CHECK((*root)->mode == 0755);
  CHECK((*root)->nlink == 2);

  std::vector<Status> results;
  for (int i = 0; i < 20; ++i)
    s.submit(create(kRootIno, name_of(i), kFirstUserIno + i),
             [&](Status st) { results.push_back(st); });
  // Visible before durable: the overlay.
  auto d = s.lookup(kRootIno, name_of(7));
  REQUIRE(d.ok());
  REQUIRE(d->has_value());
  CHECK(**d == file_dentry(name_of(7), kFirstUserIno + 7));
  REQUIRE(s.flush().ok());
  REQUIRE(results.size() == 20);
  for (auto &st : results) CHECK(st.ok());

  MetaUpdate rm;
  rm.dentries.push_back(DentryChange{kRootIno, name_of(3), std::nullopt});
  InodeRec hl;
  hl.ino = 0x5000;
  hl.type = FileType::kRegular;
  hl.nlink = 2;
  rm.inodes.push_back(InodeChange{0x5000, hl});
  REQUIRE(submit_sync(s, rm).ok());
  REQUIRE(s.wait_applied().ok());
  CHECK(s.stats().journal_bytes_unapplied == 0);
  CHECK(s.stats().apply_writes > 0);

  auto page = s.list(kRootIno, "", 7);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 7);
  CHECK(page->entries[0].name == name_of(0));
  CHECK(page->entries[3].name == name_of(4));
  CHECK(!page->end);
  auto rest = s.list(kRootIno, page->entries.back().name, 100);
  REQUIRE(rest.ok());
  CHECK(rest->entries.size() == 12);
  CHECK(rest->end);
  auto gone = s.lookup(kRootIno, name_of(3));
  REQUIRE(gone.ok());
  CHECK(!gone->has_value());
  auto hin = s.get_inode(0x5000);
  REQUIRE(hin.ok());
  REQUIRE(hin->has_value());
  CHECK((*hin)->nlink == 2);
  s.close();
  c->shutdown();
}

TEST_CASE("mds store: what was durable survives a store dropped before applying it",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_dur");
  ObjectMetaStoreOptions slow;
  slow.apply_interval = std::chrono::hours(1);  // nothing gets applied
  {
    ObjectMetaStore s(c, pool, slow);
    REQUIRE(s.open(1).ok());
    for (int i = 0; i < 50; ++i) s.submit(create(kRootIno, name_of(i), 0x2000 + i), nullptr);
    MetaUpdate sess;
    sess.sessions.push_back(SessionChange{7, SessionRec{7, "client.x", 0x9000, 16, 42}});
    sess.purges.push_back(PurgeRec{0x7777, 0, -1, 4096});
    s.submit(sess, nullptr);
    REQUIRE(s.flush().ok());
    CHECK(s.stats().journal_bytes_unapplied > 0);
  }  // dropped: the journal is all there is
  ObjectMetaStore s2(c, pool);
  auto rs = s2.open(2);
  REQUIRE(rs.ok());
  CHECK(rs->replayed_entries == 51);
  CHECK(rs->ino_next == 0x2000 + 50);
  REQUIRE(rs->sessions.size() == 1);
  CHECK(rs->sessions[0] == SessionRec{7, "client.x", 0x9000, 16, 42});
  REQUIRE(rs->pending_purges.size() == 1);
  for (int i = 0; i < 50; ++i) {
    auto d = s2.lookup(kRootIno, name_of(i));
    REQUIRE(d.ok());
    REQUIRE(d->has_value());
    CHECK((*d)->ino == Ino(0x2000 + i));
  }
  // Reopening again replays nothing: replay applied and trimmed.
  s2.close();
  ObjectMetaStore s3(c, pool);
  auto rs3 = s3.open(3);
  REQUIRE(rs3.ok());
  CHECK(rs3->replayed_entries == 0);
  s3.close();
  c->shutdown();
}

TEST_CASE("mds store: a newer incarnation fences the old one", "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_fence");
  ObjectMetaStore a(c, pool);
  REQUIRE(a.open(5).ok());
  REQUIRE(submit_sync(a, create(kRootIno, "before", 0x3000)).ok());
  ObjectMetaStore b(c, pool);
  REQUIRE(b.open(6).ok());
  CHECK(submit_sync(a, create(kRootIno, "zombie", 0x3001)).code() == -ECANCELED);
  CHECK(submit_sync(a, create(kRootIno, "zombie2", 0x3002)).code() == -ECANCELED);
  auto z = b.lookup(kRootIno, "zombie");
  REQUIRE(z.ok());
  CHECK(!z->has_value());
  auto before = b.lookup(kRootIno, "before");
  REQUIRE(before.ok());
  CHECK(before->has_value());
  // An older incarnation cannot take over again.
  ObjectMetaStore old(c, pool);
  CHECK(old.open(4).status().code() == -ECANCELED);
  a.close();
  b.close();
  ObjectMetaStore d(c, pool);
  REQUIRE(d.open(7).ok());
  auto z2 = d.lookup(kRootIno, "zombie");
  REQUIRE(z2.ok());
  CHECK(!z2->has_value());
  d.close();
  c->shutdown();
}

TEST_CASE("mds store: a torn journal tail ends the journal and corruption before it is an error",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  ObjectMetaStoreOptions slow;
  slow.apply_interval = std::chrono::hours(1);
  for (bool mid : {false, true}) {
    uint32_t pool = make_pool(pc, *c, mid ? "mds_corrupt" : "mds_torn");
    {
      ObjectMetaStore s(c, pool, slow);
      REQUIRE(s.open(1).ok());
      for (int i = 0; i < 3; ++i)
        REQUIRE(submit_sync(s, create(kRootIno, name_of(i), 0x4000 + i)).ok());
    }
    // A new filesystem's first entries go to segment 1.
    std::string seg = segment_oid(1);
    client::ObjectOperation op;
    if (mid)
      op.write(20, "garbage!");  // inside the first entry's payload
    else
      op.append(std::string("\x30\x00\x00\x00torn", 8));
    auto r = c->execute(pool, seg, std::move(op));
    REQUIRE(r.ok());
    REQUIRE(r->rc == 0);
    ObjectMetaStore s2(c, pool);
    auto rs = s2.open(2);
    if (mid) {
      REQUIRE(!rs.ok());
      CHECK(rs.status().code() == -EIO);
      CHECK_THAT(rs.status().message(), Catch::Contains(seg + " at offset 0"));
    } else {
      REQUIRE(rs.ok());
      CHECK(rs->replayed_entries == 3);
      auto d = s2.lookup(kRootIno, name_of(2));
      REQUIRE(d.ok());
      CHECK(d->has_value());
      // The torn bytes are gone with their segment: new entries replay.
      REQUIRE(submit_sync(s2, create(kRootIno, "after", 0x4010)).ok());
    }
    s2.close();
  }
  c->shutdown();
}

TEST_CASE("mds store: a directory past split_entries splits and lists in name order",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_split");
  ObjectMetaStoreOptions o;
  o.dir_split_entries = 100;
  o.apply_interval = std::chrono::milliseconds(5);
  ObjectMetaStore s(c, pool, o);
  REQUIRE(s.open(1).ok());
  for (int b = 0; b < 20; ++b) {
    MetaUpdate u;
    for (int i = b * 50; i < b * 50 + 50; ++i)
      u.dentries.push_back(DentryChange{kRootIno, name_of(i), file_dentry(name_of(i), 0x6000 + i)});
    s.submit(std::move(u), nullptr);
    if (b % 5 == 4) REQUIRE(s.wait_applied().ok());
  }
  REQUIRE(s.wait_applied().ok());
  auto check_all = [&](ObjectMetaStore &st) {
    std::vector<std::string> names;
    std::string after;
    while (true) {
      auto p = st.list(kRootIno, after, 77);
      REQUIRE(p.ok());
      for (auto &e : p->entries) names.push_back(e.name);
      if (p->end) break;
      REQUIRE(!p->entries.empty());
      after = p->entries.back().name;
    }
    REQUIRE(names.size() == 1000);
    for (int i = 0; i < 1000; ++i) REQUIRE(names[i] == name_of(i));
    for (int i : {0, 499, 999}) {
      auto d = st.lookup(kRootIno, name_of(i));
      REQUIRE(d.ok());
      REQUIRE(d->has_value());
    }
  };
  check_all(s);
  // Fragments exist as objects of their own.
  client::ObjectOperation probe;
  probe.stat(nullptr);
  auto r = c->execute(pool, dir_oid(kRootIno, 1), std::move(probe));
  REQUIRE(r.ok());
  CHECK(r->rc == 0);
  s.close();
  ObjectMetaStore s2(c, pool, o);  // reads the fragment table afresh
  REQUIRE(s2.open(2).ok());
  check_all(s2);
  s2.close();
  c->shutdown();
}

TEST_CASE("mds store: a purge removes the file's data objects", "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_purge_meta");
  uint32_t data = make_pool(pc, *c, "mds_purge_data");
  const Ino ino = 0xabc0;
  for (int n = 0; n < 3; ++n) {
    client::ObjectOperation op;
    op.write_full("data");
    auto r = c->execute(data, data_oid(ino, n), std::move(op));
    REQUIRE(r.ok());
    REQUIRE(r->rc == 0);
  }
  ObjectMetaStore s(c, pool);
  REQUIRE(s.open(1).ok());
  MetaUpdate u;
  u.purges.push_back(PurgeRec{ino, 3 * 4096 - 10, static_cast<int64_t>(data), 4096});
  REQUIRE(submit_sync(s, u).ok());
  REQUIRE(s.wait_applied().ok());
  CHECK(s.stats().purged_objects >= 3);
  for (int n = 0; n < 3; ++n) {
    client::ObjectOperation op;
    op.stat(nullptr);
    auto r = c->execute(data, data_oid(ino, n), std::move(op));
    REQUIRE(r.ok());
    CHECK(r->rc == -ENOENT);
  }
  s.close();
  ObjectMetaStore s2(c, pool);
  auto rs = s2.open(2);
  REQUIRE(rs.ok());
  CHECK(rs->pending_purges.empty());
  s2.close();
  c->shutdown();
}

TEST_CASE("mds store: a steady stream of creates reaches the objects in few rounds",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_rounds");
  ObjectMetaStoreOptions o;
  o.apply_quiet = std::chrono::seconds(1);  // a slow machine's gaps are no pause
  o.apply_max_delay = std::chrono::seconds(30);
  ObjectMetaStore s(c, pool, o);
  REQUIRE(s.open(1).ok());
  const uint64_t before = s.stats().apply_writes;
  // 300 creates over ~1.5 s, each in its own journal entry. Applied every
  // 20 ms, as before, each round would write the directory and one
  // back-pointer shard per create (hundreds of writes); gathered, one
  // round writes the directory and the 64 shards once.
  for (int i = 0; i < 300; ++i) {
    s.submit(create(kRootIno, name_of(i), kFirstUserIno + i), nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(s.wait_applied().ok());
  CHECK(s.stats().apply_writes - before <= 2 * (64 + 2));
  for (int i : {0, 150, 299}) {
    auto d = s.lookup(kRootIno, name_of(i));
    REQUIRE(d.ok());
    REQUIRE(*d);
  }
  s.close();
  ObjectMetaStore s2(c, pool);
  REQUIRE(s2.open(2).ok());
  auto d = s2.lookup(kRootIno, name_of(299));
  REQUIRE(d.ok());
  CHECK(*d);
  s2.close();
  c->shutdown();
}

TEST_CASE("mds store: while the journal is busy purges keep to the busy rate, then finish",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_pace_meta");
  uint32_t data = make_pool(pc, *c, "mds_pace_data");
  ObjectMetaStoreOptions o;
  o.purge_busy_rate = 64;                   // a round of 64 removals a second
  o.apply_quiet = std::chrono::seconds(1);  // "busy" survives a slow machine
  o.apply_max_delay = std::chrono::milliseconds(50);
  ObjectMetaStore s(c, pool, o);
  REQUIRE(s.open(1).ok());
  constexpr int kFiles = 256;
  MetaUpdate u;
  for (int i = 0; i < kFiles; ++i)
    u.purges.push_back(PurgeRec{Ino(0xd000 + i), 100, static_cast<int64_t>(data), 4096});
  REQUIRE(submit_sync(s, u).ok());
  // A client keeps the journal busy.
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    for (int i = 0; !stop; ++i) {
      s.submit(create(kRootIno, name_of(i), kFirstUserIno + i), nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Unpaced, 256 removals take a fraction of a second; paced, a round of
  // 64 goes each second.
  CHECK(s.stats().purged_objects < kFiles);
  stop = true;
  busy.join();
  // wait_applied does not wait for the pace.
  REQUIRE(s.wait_applied().ok());
  CHECK(s.stats().purged_objects == kFiles);
  s.close();
  c->shutdown();
}

TEST_CASE("mds store: fs check finds a bad link count and orphans and repair fixes them",
          "[mds][store][fscheck]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t meta = make_pool(pc, *c, "mds_check_meta");
  uint32_t data = make_pool(pc, *c, "mds_check_data");
  {
    ObjectMetaStore s(c, meta);
    REQUIRE(s.open(1).ok());
    auto root = s.get_inode(kRootIno);
    REQUIRE(root.ok());
    InodeRec r = **root;
    r.nlink = 3;  // one subdirectory
    DentryRec sub;
    sub.name = "sub";
    sub.ino = 0x1001;
    sub.type = FileType::kDirectory;
    InodeRec si;
    si.ino = 0x1001;
    si.type = FileType::kDirectory;
    si.mode = 0755;
    si.nlink = 5;  // wrong: 2
    sub.inode = si;
    MetaUpdate u = create(kRootIno, "f", 0x1000);
    u.dentries.push_back(DentryChange{kRootIno, "sub", sub});
    u.inodes.push_back(InodeChange{kRootIno, r});
    InodeRec lonely;
    lonely.ino = 0x8888;
    lonely.type = FileType::kRegular;
    u.inodes.push_back(InodeChange{0x8888, lonely});  // no name: an orphan
    // An inline file: its bytes are in its dentry, any object of it is stale.
    MetaUpdate small = create(kRootIno, "small", 0x1002);
    small.dentries[0].dentry->inode->data_inline = true;
    small.dentries[0].dentry->inode->inline_data = std::string("inline\0bytes", 12);
    small.dentries[0].dentry->inode->size = 12;
    for (auto &d : small.dentries) u.dentries.push_back(d);
    REQUIRE(submit_sync(s, u).ok());
    REQUIRE(s.wait_applied().ok());
    s.close();
  }
  {
    ObjectMetaStore s(c, meta);
    REQUIRE(s.open(2).ok());
    auto d = s.lookup(kRootIno, "small");
    REQUIRE(d.ok());
    REQUIRE(*d);
    CHECK((*d)->inode->data_inline);
    CHECK((*d)->inode->inline_data == std::string("inline\0bytes", 12));
    s.close();
  }
  for (Ino ino : {Ino(0x1000), Ino(0x9999), Ino(0x1002)}) {
    client::ObjectOperation op;
    op.write_full("x");
    auto w = c->execute(data, data_oid(ino, 0), std::move(op));
    REQUIRE(w.ok());
    REQUIRE(w->rc == 0);
  }
  auto rep = fs_check(*c, meta, data, false);
  REQUIRE(rep.ok());
  std::set<std::string> kinds = problem_kinds(*rep);
  CHECK(kinds.count("bad_nlink d.0000000000000001 key sub") == 1);
  CHECK(kinds.count("orphan_inode i.0000000000008888") == 1);
  CHECK(kinds.count("orphan_data 0000000000009999.00000000") == 1);
  CHECK(kinds.count("stale_data 0000000000001002.00000000") == 1);
  CHECK(rep->problems.size() == 4);
  CHECK(rep->unrepaired() == 4);
  auto fixed = fs_check(*c, meta, data, true);
  REQUIRE(fixed.ok());
  CHECK(fixed->problems.size() == 4);
  CHECK(fixed->unrepaired() == 0);
  auto again = fs_check(*c, meta, data, false);
  REQUIRE(again.ok());
  std::string left;
  for (auto &p : again->problems) left += p.kind + " " + p.object + ": " + p.detail + "\n";
  INFO(left);
  CHECK(again->problems.empty());
  CHECK(again->files == 2);  // f and the inline one
  CHECK(again->directories == 3);
  c->shutdown();
}

TEST_CASE("mds store: a dropped inode's back-pointer goes and fs check repairs stale ones",
          "[mds][store][fscheck]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t meta = make_pool(pc, *c, "mds_backptr_meta");
  uint32_t data = make_pool(pc, *c, "mds_backptr_data");
  auto back_pointer_of = [&](ObjectMetaStore &s, Ino ino) {
    auto bp = s.back_pointer(ino);
    REQUIRE(bp.ok());
    return *bp;
  };
  {
    ObjectMetaStore s(c, meta);
    REQUIRE(s.open(1).ok());
    MetaUpdate u;
    for (Ino ino = 0x1000; ino < 0x1004; ++ino) {
      MetaUpdate one = create(kRootIno, "f" + std::to_string(ino - 0x1000), ino);
      u.dentries.push_back(one.dentries[0]);
    }
    u.ino_next = 0x1004;
    REQUIRE(submit_sync(s, u).ok());
    REQUIRE(s.wait_applied().ok());
    auto bp = back_pointer_of(s, 0x1000);
    REQUIRE(bp);
    CHECK(bp->parent == kRootIno);
    CHECK(bp->name == "f0");

    // f0 unlinked; g made and unlinked before any apply round, its
    // shard (b.3f) never written: the removal must not fail on it.
    MetaUpdate rm;
    rm.dentries.push_back(DentryChange{kRootIno, "f0", std::nullopt});
    rm.dropped_back_pointers.push_back(0x1000);
    REQUIRE(submit_sync(s, rm).ok());
    MetaUpdate g = create(kRootIno, "g", 0x203f);
    REQUIRE(submit_sync(s, g).ok());
    MetaUpdate rmg;
    rmg.dentries.push_back(DentryChange{kRootIno, "g", std::nullopt});
    rmg.dropped_back_pointers.push_back(0x203f);
    REQUIRE(submit_sync(s, rmg).ok());
    REQUIRE(s.wait_applied().ok());
    CHECK(!back_pointer_of(s, 0x1000));
    CHECK(!back_pointer_of(s, 0x203f));
    CHECK(back_pointer_of(s, 0x1001));
    s.close();
  }
  auto clean = fs_check(*c, meta, data, false);
  REQUIRE(clean.ok());
  std::string found;
  for (auto &p : clean->problems) found += p.kind + " " + p.object + ": " + p.detail + "\n";
  INFO(found);
  CHECK(clean->problems.empty());

  // A leak from before the fix (a back-pointer of an inode no dentry holds)
  // and a wrong one (f1's names another dentry).
  client::ObjectOperation leak;
  leak.omap_set({hex16(0x7777)}, {std::string(8, '\0') + "gone"});
  auto w = c->execute(meta, backptr_oid(0x7777), std::move(leak));
  REQUIRE(w.ok());
  REQUIRE(w->rc == 0);
  client::ObjectOperation wrong;
  wrong.omap_set({hex16(0x1001)}, {std::string("\x01\0\0\0\0\0\0\0", 8) + "elsewhere"});
  w = c->execute(meta, backptr_oid(0x1001), std::move(wrong));
  REQUIRE(w.ok());
  REQUIRE(w->rc == 0);
  auto rep = fs_check(*c, meta, data, false);
  REQUIRE(rep.ok());
  std::set<std::string> kinds = problem_kinds(*rep);
  CHECK(kinds.count("stale_backptr b.37") == 1);
  CHECK(kinds.count("bad_backptr b.01") == 1);
  CHECK(rep->problems.size() == 2);
  auto fixed = fs_check(*c, meta, data, true);
  REQUIRE(fixed.ok());
  CHECK(fixed->unrepaired() == 0);
  auto again = fs_check(*c, meta, data, false);
  REQUIRE(again.ok());
  CHECK(again->problems.empty());
  {
    ObjectMetaStore s(c, meta);
    REQUIRE(s.open(2).ok());
    auto bp = back_pointer_of(s, 0x1001);
    REQUIRE(bp);
    CHECK(bp->name == "f1");
    CHECK(!back_pointer_of(s, 0x7777));
    s.close();
  }
  c->shutdown();
}

// Group commit: a burst of submits shares journal writes, and the applier
// writes each touched object once per round, not once per entry. The
// timings printed are figures for the reader, never asserted.
TEST_CASE("mds store: a burst of submits is committed in batches, not entry by entry",
          "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_batch");
  ObjectMetaStore s(c, pool);
  REQUIRE(s.open(1).ok());
  const int n = 2000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) s.submit(create(kRootIno, name_of(i), 0x20000 + i), nullptr);
  REQUIRE(s.flush().ok());
  auto t1 = std::chrono::steady_clock::now();
  REQUIRE(s.wait_applied().ok());
  auto t2 = std::chrono::steady_clock::now();
  auto st = s.stats();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "%d creates: durable in %.0f ms, %llu journal writes; applied after %.0f ms with %llu "
      "object writes\n",
      n, ms(t1 - t0), (unsigned long long)st.journal_writes, ms(t2 - t0),
      (unsigned long long)st.apply_writes);
  CHECK(st.journal_entries >= uint64_t(n));
  CHECK(st.journal_writes < uint64_t(n) / 10);
  // Entry by entry would be two writes each (dentry and back-pointer).
  CHECK(st.apply_writes < uint64_t(n) / 2);
  auto page = s.list(kRootIno, "", size_t(n) + 10);
  REQUIRE(page.ok());
  CHECK(page->entries.size() == size_t(n));
  s.close();
  c->shutdown();
}

TEST_CASE(
    "mds store: changes nobody waits for share journal writes; hurry() and flush() end "
    "the gather",
    "[mds][store]") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  auto c = connect(pc);
  uint32_t pool = make_pool(pc, *c, "mds_gather");
  {
    ObjectMetaStoreOptions o;
    o.journal_delay = std::chrono::milliseconds(50);
    ObjectMetaStore s(c, pool, o);
    REQUIRE(s.open(1).ok());
    const uint64_t before = s.stats().journal_writes;
    // 40 changes 2 ms apart, as an asynchronous client's batches come:
    // written at once, each would be a journal write of its own.
    for (int i = 0; i < 40; ++i) {
      s.submit(create(kRootIno, name_of(i), kFirstUserIno + i), nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    REQUIRE(s.flush().ok());
    const uint64_t writes = s.stats().journal_writes - before;
    INFO(writes << " journal writes for 40 changes");
    CHECK(writes <= 8);
    s.close();
  }
  {
    ObjectMetaStoreOptions o;
    o.journal_delay = std::chrono::seconds(20);
    ObjectMetaStore s(c, pool, o);
    REQUIRE(s.open(2).ok());
    std::atomic<bool> durable{false};
    s.submit(create(kRootIno, "late", kFirstUserIno + 100), [&](Status st) {
      CHECK(st.ok());
      durable = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK_FALSE(durable.load());  // gathering
    auto t0 = std::chrono::steady_clock::now();
    s.hurry();
    for (int i = 0; i < 1000 && !durable; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(durable.load());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    // flush() needs no hurry() first.
    s.submit(create(kRootIno, "later", kFirstUserIno + 101), nullptr);
    t0 = std::chrono::steady_clock::now();
    REQUIRE(s.flush().ok());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    s.close();
  }
  c->shutdown();
}
