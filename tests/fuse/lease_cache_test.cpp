// The lease cache: what a directory lease lets the client answer alone,
// and that its own creates, unlinks and renames keep a complete directory
// complete (docs/FILESYSTEM.md, "Sessions, leases").
#include "lease_cache.h"

#include <algorithm>
#include <catch2/catch.hpp>

using strata::fuse::DirEntry;
using strata::fuse::FileType;
using strata::fuse::InodeAttr;
using strata::fuse::LeaseCache;
using strata::fuse::LeaseGrant;
using Found = LeaseCache::Found;

namespace {

constexpr uint64_t kDir = 10, kOther = 20;
constexpr uint32_t kDirRead = 1;

LeaseGrant lease(uint64_t seq, int64_t expires) { return LeaseGrant{kDirRead, seq, expires}; }
DirEntry file(uint64_t ino) { return DirEntry{ino, FileType::kRegular}; }

// A complete directory {a, b} leased until t=1000.
void fill(LeaseCache &c, uint64_t dir = kDir) {
  c.put_dir_lease(dir, lease(1, 1000), false);
  c.put_entry(dir, "a", file(100));
  c.put_entry(dir, "b", file(101));
  c.mark_complete(dir, 1);
}

std::vector<std::string> names(const LeaseCache &c, uint64_t dir, int64_t now = 0) {
  std::vector<std::string> out;
  auto l = c.list(dir, now);
  REQUIRE(l);
  for (auto &[n, e] : *l) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("a complete directory answers entries, negative lookups and readdir alone") {
  LeaseCache c;
  fill(c);
  auto a = c.lookup(kDir, "a", 10);
  CHECK(a.found == Found::kEntry);
  CHECK(a.entry.ino == 100);
  CHECK(a.valid_ms == 990);
  CHECK(c.lookup(kDir, "zz", 10).found == Found::kNegative);
  CHECK(names(c, kDir) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("an incomplete directory answers only the entries it has") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(1, 1000), false);
  c.put_entry(kDir, "a", file(100));
  CHECK(c.lookup(kDir, "a", 0).found == Found::kEntry);
  CHECK(c.lookup(kDir, "zz", 0).found == Found::kMiss);
  CHECK_FALSE(c.list(kDir, 0));
  // Entries without a lease on their directory are not kept at all.
  c.put_entry(kOther, "x", file(7));
  CHECK(c.lookup(kOther, "x", 0).found == Found::kMiss);
}

TEST_CASE("own creates and unlinks keep the directory complete") {
  LeaseCache c;
  fill(c);
  c.created(kDir, "c", file(102));
  c.removed(kDir, "a");
  CHECK(c.lookup(kDir, "c", 0).entry.ino == 102);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kNegative);
  CHECK(names(c, kDir) == std::vector<std::string>{"b", "c"});
}

TEST_CASE("own renames keep both directories complete, replacing the target") {
  LeaseCache c;
  fill(c, kDir);
  c.put_dir_lease(kOther, lease(1, 1000), false);
  c.put_entry(kOther, "b", file(200));
  c.mark_complete(kOther, 1);

  c.renamed(kDir, "a", kDir, "a2", 0);  // within one directory
  CHECK(names(c, kDir) == std::vector<std::string>{"a2", "b"});
  CHECK(c.lookup(kDir, "a2", 0).entry.ino == 100);

  c.renamed(kDir, "a2", kOther, "b", 0);  // across, over an existing name
  CHECK(names(c, kDir) == std::vector<std::string>{"b"});
  CHECK(names(c, kOther) == std::vector<std::string>{"b"});
  CHECK(c.lookup(kOther, "b", 0).entry.ino == 100);
  CHECK(c.lookup(kDir, "a2", 0).found == Found::kNegative);
}

TEST_CASE("RENAME_EXCHANGE swaps the two entries") {
  LeaseCache c;
  fill(c);
  c.renamed(kDir, "a", kDir, "b", 2);
  CHECK(c.lookup(kDir, "a", 0).entry.ino == 101);
  CHECK(c.lookup(kDir, "b", 0).entry.ino == 100);
  CHECK(names(c, kDir) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("a rename from a directory we do not cache makes the target incomplete") {
  LeaseCache c;
  fill(c);
  // The moved entry is unknown here: the target cannot list it.
  c.renamed(kOther, "x", kDir, "x", 0);
  CHECK_FALSE(c.list(kDir, 0));
  CHECK(c.lookup(kDir, "x", 0).found == Found::kMiss);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kEntry);
}

TEST_CASE("leases expire: nothing is answered after, and expire() frees them") {
  LeaseCache c;
  fill(c);
  InodeAttr a;
  a.ino = 100;
  a.size = 5;
  c.put_inode(a, LeaseGrant{3, 1, 500});
  CHECK(c.inode(100, 499));
  CHECK(c.inode(100, 499)->second == 1);
  CHECK_FALSE(c.inode(100, 500));
  CHECK(c.lookup(kDir, "zz", 999).found == Found::kNegative);
  CHECK(c.lookup(kDir, "zz", 1000).found == Found::kMiss);
  CHECK_FALSE(c.list(kDir, 1000));
  CHECK(c.counts().entries == 2);
  CHECK(c.expire(1000) == 4);  // the dir, its two entries, the inode
  CHECK(c.counts().entries == 0);
  CHECK(c.counts().dirs == 0);
}

TEST_CASE("a new grant starts over; a renewal of the same grant keeps the listing") {
  LeaseCache c;
  fill(c);
  c.put_dir_lease(kDir, lease(1, 2000), false);  // renewed
  CHECK(c.lookup(kDir, "zz", 1500).found == Found::kNegative);
  c.put_dir_lease(kDir, lease(2, 3000), false);  // after a revoke: entries may be stale
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  CHECK_FALSE(c.list(kDir, 0));
}

TEST_CASE("a revoke drops the directory and names what the kernel must forget") {
  LeaseCache c;
  fill(c);
  CHECK(c.names(kDir) == std::vector<std::string>{"a", "b"});
  c.drop(kDir);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  CHECK(c.names(kDir).empty());
}

// Regression (fs_e2e tar/git/rm -rf): the MDS renews a lease with the same
// seq and says `complete` after the client's cache already let it run
// out; the client then held an empty "complete" listing and readdir and
// negative lookups hid every entry it had not itself created since.
TEST_CASE("a lease the MDS calls complete is not complete in a cache that lacks the entries") {
  LeaseCache c;
  fill(c);
  CHECK(c.expire(1000) > 0);                    // the client's copy ran out
  c.put_dir_lease(kDir, lease(1, 2000), true);  // the MDS renews seq 1, "complete"
  c.created(kDir, "new", file(102));
  CHECK(c.lookup(kDir, "a", 1500).found == Found::kMiss);
  CHECK_FALSE(c.list(kDir, 1500));
}

TEST_CASE("a readdir completes the listing only if one lease covered all its pages") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(1, 1000), false);
  c.put_entry(kDir, "a", file(100));             // page 1 under seq 1
  c.put_dir_lease(kDir, lease(2, 1000), false);  // revoked and granted again
  c.put_entry(kDir, "b", file(101));             // page 2 under seq 2
  c.mark_complete(kDir, 1);
  CHECK_FALSE(c.list(kDir, 0));
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  c.mark_complete(kDir, 2);  // a readdir wholly under seq 2 may
  CHECK(c.list(kDir, 0));
}

// An inode inline in a directory is cached under the directory's lease:
// it changes only after the MDS revokes that lease.
TEST_CASE("an inode cached under its directory's lease lives and dies with that lease") {
  LeaseCache c;
  fill(c);
  InodeAttr a;
  a.ino = 100;
  a.type = FileType::kRegular;
  a.nlink = 1;
  c.put_inode(a, LeaseGrant{}, kDir);
  CHECK(c.cover_of(100) == kDir);
  auto hit = c.inode(100, 500);
  REQUIRE(hit);
  CHECK(hit->second == 500);                     // the directory's time left
  c.put_dir_lease(kDir, lease(1, 2000), false);  // renewed: so is the inode
  CHECK(c.inode(100, 1500));
  c.put_dir_lease(kDir, lease(2, 3000), false);  // a new grant: it may be stale
  CHECK_FALSE(c.inode(100, 0));

  c.put_inode(a, LeaseGrant{}, kDir);
  CHECK(c.inode(100, 0));
  c.drop(kDir);  // revoked
  CHECK_FALSE(c.inode(100, 0));
  CHECK(c.expire(0) == 1);  // swept

  c.put_inode(a, LeaseGrant{}, kOther);  // no lease on kOther: not cached
  CHECK_FALSE(c.inode(100, 0));
}

// Asynchronous mkdir: the client assumes dirWrite (seq 0) on the new
// directory before the MDS names the grant; the real seq keeps it all.
TEST_CASE("a lease assumed before the MDS names it is adopted with what it covers") {
  constexpr uint32_t kDirWrite = 2;
  LeaseCache c;
  c.put_dir_lease(kDir, LeaseGrant{kDirWrite, 0, 1000}, true);
  c.mark_new(kDir);
  CHECK(c.lookup(kDir, "x", 0).found == Found::kNegative);
  c.created(kDir, "x", file(100));
  InodeAttr a;
  a.ino = 100;
  c.put_inode(a, LeaseGrant{}, kDir);
  c.adopt(kDir, LeaseGrant{kDirWrite, 7, 5000});
  CHECK(c.dir_seq(kDir) == 7);
  CHECK(c.lookup(kDir, "x", 4000).found == Found::kEntry);
  CHECK(c.lookup(kDir, "y", 4000).found == Found::kNegative);
  CHECK(c.inode(100, 4000));
  // A reply naming the same grant before the adoption would have kept it too.
  c.put_dir_lease(kDir, LeaseGrant{kDirWrite, 7, 6000}, false);
  CHECK(c.lookup(kDir, "x", 5500).found == Found::kEntry);
  auto l = c.dir_lease(kDir, 5500);
  REQUIRE(l);
  CHECK(l->first.kind == kDirWrite);
  CHECK(l->second);  // complete
}

TEST_CASE("only directories in use are renewed, and a renewal keeps the listing") {
  LeaseCache c;
  fill(c);                                                 // kDir until 1000
  fill(c, kOther);                                         // kOther until 1000
  CHECK(c.lookup(kDir, "a", 600).found == Found::kEntry);  // kDir used at 600
  CHECK(c.renewable(700, 1200, 500) == std::vector<uint64_t>{kDir});
  CHECK(c.renewable(700, 900, 500).empty());  // not running out soon enough
  c.renewed(kDir, lease(1, 5000));
  c.renewed(kOther, lease(9, 5000));  // another grant's seq: ignored
  CHECK(c.lookup(kDir, "zz", 4000).found == Found::kNegative);
  CHECK(c.lookup(kOther, "a", 4000).found == Found::kMiss);
}

// Work in a tree this client did not list (a tar x over it after a
// remount): the names it looked up or removed itself are known either way.
TEST_CASE("an incomplete directory answers for names it knows are missing") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(3, 1000), false);
  c.put_absent(kDir, "gone", 3);
  c.put_absent(kDir, "stale", 2);  // under another grant: not trusted
  CHECK(c.lookup(kDir, "gone", 0).found == Found::kNegative);
  CHECK(c.lookup(kDir, "stale", 0).found == Found::kMiss);
  CHECK(c.lookup(kDir, "other", 0).found == Found::kMiss);
  // Our own unlink of a name we knew: missing now.
  c.put_entry(kDir, "a", file(100));
  c.removed(kDir, "a");
  CHECK(c.lookup(kDir, "a", 0).found == Found::kNegative);
  // Our own create of a missing name: present.
  c.created(kDir, "gone", file(101));
  CHECK(c.lookup(kDir, "gone", 0).entry.ino == 101);
  // A revoke makes the kernel forget the negative entries too.
  auto n = c.names(kDir);
  std::sort(n.begin(), n.end());
  CHECK(n == std::vector<std::string>{"a", "gone"});
  // A new grant knows nothing yet.
  c.put_dir_lease(kDir, lease(4, 1000), false);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  CHECK(c.names(kDir).empty());
}

TEST_CASE("renames in an incomplete directory leave the old name known missing") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(1, 1000), false);
  c.put_entry(kDir, "a", file(100));
  c.put_absent(kDir, "b", 1);
  c.renamed(kDir, "a", kDir, "b", 0);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kNegative);
  CHECK(c.lookup(kDir, "b", 0).entry.ino == 100);
}

TEST_CASE("missing names are bounded per directory, and a listing makes them moot") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(1, 1000), false);
  for (size_t i = 0; i < LeaseCache::kMaxAbsent + 10; ++i)
    c.put_absent(kDir, "n" + std::to_string(i), 1);
  CHECK(c.names(kDir).size() == LeaseCache::kMaxAbsent);
  CHECK(c.lookup(kDir, "n" + std::to_string(LeaseCache::kMaxAbsent + 5), 0).found == Found::kMiss);
  c.mark_complete(kDir, 1);
  CHECK(c.names(kDir).empty());
  CHECK(c.lookup(kDir, "n1", 0).found == Found::kNegative);
}

// A reply that granted a lease may be absorbed after the revoke of that
// grant was handled (the revoke runs on another thread): it must not come
// back.
TEST_CASE("a revoked grant is refused when a late reply brings it again") {
  LeaseCache c;
  fill(c);  // seq 1
  c.revoked(kDir, 1, 0);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  c.put_dir_lease(kDir, lease(1, 1000), true);
  c.put_entry(kDir, "a", file(100));
  CHECK_FALSE(c.dir_lease(kDir, 0));
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  InodeAttr own;
  own.ino = kDir;
  c.put_inode(own, lease(1, 1000));
  CHECK_FALSE(c.inode(kDir, 0));
  // A newer grant is taken.
  c.put_dir_lease(kDir, lease(2, 1000), false);
  CHECK(c.dir_lease(kDir, 0));
  // The record is forgotten once no reply from before could still come.
  c.revoked(kOther, 5, 100);
  c.expire(100 + LeaseCache::kRevokedKeepMs);
  c.put_dir_lease(kOther, lease(5, 200 + LeaseCache::kRevokedKeepMs), false);
  CHECK(c.dir_lease(kOther, 150 + LeaseCache::kRevokedKeepMs));
}

TEST_CASE("a directory's misses are counted per grant, and the nth comes once") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(1, 1000), false);
  CHECK_FALSE(c.note_miss(kDir, 2));
  CHECK(c.note_miss(kDir, 2));
  CHECK_FALSE(c.note_miss(kDir, 2));
  c.put_dir_lease(kDir, lease(2, 1000), false);
  CHECK_FALSE(c.note_miss(kDir, 2));
  CHECK(c.note_miss(kDir, 2));
  CHECK_FALSE(c.note_miss(kOther, 1));  // no lease: nothing to list under
}

// Another thread's unlink (or create) lands in the cache while a listing's
// page is on its way: the page shows the directory as it was, and must not
// bring the removed name back (nor hide the created one).
TEST_CASE("a listing does not undo this client's own changes made while it ran") {
  LeaseCache c;
  c.put_dir_lease(kDir, lease(1, 1000), false);
  c.put_entry(kDir, "x", file(100));
  uint64_t since = c.begin_listing(kDir);
  c.removed(kDir, "x");  // another thread, after the page was asked for
  c.created(kDir, "y", file(101));
  c.put_listed(kDir, "x", file(100), since);  // the page, from before the unlink
  c.put_listed(kDir, "z", file(102), since);
  c.mark_complete(kDir, 1);
  c.end_listing(kDir);
  CHECK(c.lookup(kDir, "x", 0).found == Found::kNegative);
  CHECK(c.lookup(kDir, "y", 0).entry.ino == 101);
  CHECK(c.lookup(kDir, "z", 0).entry.ino == 102);
  // A later listing sees the changes made before it began (the MDS had
  // them first: a batch leaves before any synchronous request).
  c.removed(kDir, "z");
  uint64_t later = c.begin_listing(kDir);
  c.put_listed(kDir, "w", file(103), later);
  c.end_listing(kDir);
  CHECK(c.lookup(kDir, "w", 0).entry.ino == 103);
  CHECK(c.lookup(kDir, "z", 0).found == Found::kNegative);
}

TEST_CASE("a listing started before any lease counts changes from its start") {
  LeaseCache c;
  uint64_t since = c.begin_listing(kDir);  // no lease yet: a placeholder
  CHECK_FALSE(c.dir_lease(kDir, 0));
  CHECK(c.lookup(kDir, "a", 0).found == Found::kMiss);
  CHECK(c.expire(10) == 0);                      // kept while the listing runs
  c.put_dir_lease(kDir, lease(1, 1000), false);  // the first page's grant
  c.put_entry(kDir, "a", file(100));
  c.removed(kDir, "a");
  c.put_listed(kDir, "a", file(100), since);
  c.end_listing(kDir);
  CHECK(c.lookup(kDir, "a", 0).found == Found::kNegative);
}

TEST_CASE("a directory listed whole is remembered after its lease ran out") {
  LeaseCache c;
  fill(c);  // complete, leased until t=1000
  c.put_dir_lease(kOther, lease(1, 1000), false);
  c.put_entry(kOther, "a", file(200));  // never listed whole
  CHECK(c.listed_before(kDir));
  CHECK(!c.listed_before(kOther));
  c.expire(1000);
  CHECK(c.listed_before(kDir));
  CHECK(!c.listed_before(kOther));
  // A new grant answers nothing from before; the history stays.
  c.put_dir_lease(kDir, lease(2, 2000), false);
  CHECK(c.lookup(kDir, "a", 1500).found == Found::kMiss);
  CHECK(c.listed_before(kDir));
  // Replaced by a new grant before expire() swept it: remembered too.
  fill(c, kOther);
  c.put_dir_lease(kOther, lease(7, 3000), false);
  CHECK(c.listed_before(kOther));
}
