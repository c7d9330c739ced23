// What the fuse client may answer without asking the MDS: directory
// entries and inode attributes, each valid until its lease runs out
// (docs/FILESYSTEM.md, "Sessions, leases"). A directory whose lease says
// `complete` also answers negative lookups and readdir locally; the
// client's own creates, unlinks and renames update the cache so that it
// stays complete (a rename never drops it).
//
// Times are milliseconds of the caller's steady clock (the caller turns
// the MDS's expiresMs into its own clock, minus a safety margin), so that
// tests drive expiry without sleeping.
//
// Threading: every method locks; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "inode_attr.h"

namespace strata::fuse {

struct DirEntry {
  uint64_t ino = 0;
  FileType type = FileType::kUnknown;
};

// A lease as the cache keeps it (fsproto::LeaseKind numbers in kind).
struct LeaseGrant {
  uint32_t kind = 0;
  uint64_t seq = 0;
  int64_t expires_ms = 0;  // caller's clock
};

class LeaseCache {
 public:
  enum class Found { kMiss, kEntry, kNegative };
  struct LookupResult {
    Found found = Found::kMiss;
    DirEntry entry;
    int64_t valid_ms = 0;  // how long the answer stays true (entry timeout)
  };

  // An inode's attributes under its lease (a lease that ran out is a miss).
  // `cover`: the directory whose lease the attributes are cached under
  // (an inode inline in its parent's dentry changes only after the MDS
  // revokes the parent's leases); 0: the inode's own lease. drop(cover)
  // forgets them with the directory.
  // `parent`: the directory the inode is inline in, when known (kept
  // from an earlier put when 0 here); parent_of() names it.
  void put_inode(const InodeAttr &attr, const LeaseGrant &lease, uint64_t cover = 0,
                 uint64_t parent = 0);
  uint64_t parent_of(uint64_t ino) const;
  std::optional<std::pair<InodeAttr, int64_t>> inode(uint64_t ino, int64_t now_ms) const;
  // The attributes changed under a lease the client still holds (its own
  // setattr, or a local size change under fileWrite).
  void update_inode(const InodeAttr &attr);

  // A lease on directory `dir`: its entries may be cached until expiry.
  // A new lease with a new seq starts from an empty, incomplete listing;
  // the same seq renewed keeps what it covers. The MDS's `complete` flag
  // is ignored: it says a listing ran under the lease, not that this
  // cache holds it (the cache may have expired and come back empty, or a
  // page's entries may not be in yet); only mark_complete() completes.
  void put_dir_lease(uint64_t dir, const LeaseGrant &lease, bool complete);
  // An entry the MDS sent (lookup, readdir). Ignored without a dir lease.
  void put_entry(uint64_t dir, const std::string &name, DirEntry e);
  // The MDS said `name` is not in dir, under the lease `seq` (ignored
  // unless that lease is the one cached). At most kMaxAbsent names a
  // directory: a lookup storm of missing names (an include path search)
  // must not grow the cache without bound; past it, they are asked again.
  void put_absent(uint64_t dir, const std::string &name, uint64_t seq);
  static constexpr size_t kMaxAbsent = 4096;
  // A listing read from the MDS races this client's own changes in the
  // directory (another thread's create or unlink): a page may show a name
  // as it was before a change the cache already holds. begin_listing()
  // returns the directory's change count; put_listed() then skips names
  // changed here since; end_listing() ends the bookkeeping.
  uint64_t begin_listing(uint64_t dir);
  void put_listed(uint64_t dir, const std::string &name, DirEntry e, uint64_t since);
  void end_listing(uint64_t dir);
  // A lookup missed in dir: true once per grant, at its `nth` miss (the
  // caller then reads the listing: prefetch_listing).
  bool note_miss(uint64_t dir, uint32_t nth);
  // Whether dir was complete here, under its lease now or under one that
  // ran out since (or was replaced by a new grant): a walk over it again
  // (rsync, find, make after a pause) will likely look up most of its
  // names. Only history: nothing cached under an old lease is answered
  // from. At most kMaxListedBefore directories whose lease ended are
  // remembered (then it starts over).
  bool listed_before(uint64_t dir) const;
  static constexpr size_t kMaxListedBefore = 1u << 16;
  // The seq of the lease dir is cached under; 0: none.
  uint64_t dir_seq(uint64_t dir) const;
  // The live lease on dir and whether its listing is complete.
  std::optional<std::pair<LeaseGrant, bool>> dir_lease(uint64_t dir, int64_t now_ms) const;
  // The directory whose lease covers ino's cached attributes (0: its own
  // lease, or not cached).
  uint64_t cover_of(uint64_t ino) const;
  // A lease the client assumed before the MDS named it (seq 0: a
  // directory made or a file created asynchronously) gets its seq and
  // expiry from the MDS's reply, keeping what it covers.
  void adopt(uint64_t ino, const LeaseGrant &lease);
  // After a readdir reached the end and put every entry: the listing is
  // whole, if the whole readdir ran under the lease `seq` (a revoke or
  // expiry between its pages dropped what the earlier pages put).
  void mark_complete(uint64_t dir, uint64_t seq);
  // A directory made here (asynchronously): empty, so complete, whatever
  // seq its lease gets.
  void mark_new(uint64_t dir);

  LookupResult lookup(uint64_t dir, const std::string &name, int64_t now_ms) const;
  // The whole listing in name order, if the directory is complete and its
  // lease runs.
  std::optional<std::vector<std::pair<std::string, DirEntry>>> list(uint64_t dir,
                                                                    int64_t now_ms) const;

  // The client's own changes, as the MDS confirmed them: keep the cached
  // directories true (and complete).
  void created(uint64_t dir, const std::string &name, DirEntry e);
  void removed(uint64_t dir, const std::string &name);
  // flags: RENAME_NOREPLACE (1), RENAME_EXCHANGE (2).
  void renamed(uint64_t dir, const std::string &name, uint64_t new_dir, const std::string &new_name,
               uint32_t flags);

  // Leases worth renewing: directories used since used_since whose lease
  // runs out before expiring_before (a directory nobody uses is left to
  // expire: seed 002's walker must not pin the MDS's cache).
  std::vector<uint64_t> renewable(int64_t now_ms, int64_t expiring_before,
                                  int64_t used_since) const;
  // The MDS renewed a lease (same kind and seq): it runs to the new time.
  void renewed(uint64_t ino, const LeaseGrant &lease);

  // The inodes cached under dir's lease (whose kernel attributes a revoke
  // of that lease must invalidate too).
  std::vector<uint64_t> covered(uint64_t dir) const;

  // The names cached in dir, present or absent (the kernel entries,
  // negative ones too, to invalidate on revoke).
  std::vector<std::string> names(uint64_t dir) const;

  // A lease was given up or ran out: forget what it covered.
  void drop(uint64_t ino);
  // A lease was revoked: forget what it covered, and refuse that grant
  // (seq) and older ones for ino from now on. A reply that granted it may
  // be absorbed after the revoke was handled (different threads); putting
  // it back would cache what the MDS no longer guards.
  void revoked(uint64_t ino, uint64_t seq, int64_t now_ms);
  static constexpr int64_t kRevokedKeepMs = 600000;
  // Forgets every entry and inode whose lease ran out; returns how many.
  size_t expire(int64_t now_ms);
  void clear();

  struct Counts {
    size_t dirs = 0, entries = 0, inodes = 0, complete_dirs = 0;
  };
  Counts counts() const;

 private:
  struct CachedDir {
    LeaseGrant lease;
    bool complete = false;
    std::map<std::string, DirEntry> entries;
    std::set<std::string> absent;             // known missing (only while !complete)
    uint32_t misses = 0;                      // lookups that missed under this grant
    uint64_t changes = 0;                     // this client's own changes in it
    uint32_t listings = 0;                    // listings in flight (begin_listing)
    std::map<std::string, uint64_t> changed;  // name -> its last change, while listings > 0
    uint64_t generation = 0;      // this cache's count of grants: what covered inodes check
    mutable int64_t used_ms = 0;  // last lookup, listing or change (renewable())
  };
  struct CachedInode {
    InodeAttr attr;
    LeaseGrant lease;  // its own (cover == 0)
    uint64_t cover = 0;
    uint64_t cover_generation = 0;
    uint64_t parent = 0;
  };
  // When c's lease (its own or its directory's) runs out; 0: it did.
  int64_t expiry_locked(const CachedInode &c) const;
  const CachedDir *live_dir(uint64_t dir, int64_t now_ms) const;
  static void note_change(CachedDir &d, const std::string &name);
  void remember_listed(uint64_t dir, const CachedDir &d);  // REQUIRES: mu_
  // A grant revoked before: its seq is at most the one recorded for ino.
  bool refused_locked(uint64_t ino, const LeaseGrant &lease) const;

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, CachedDir> dirs_;
  std::unordered_map<uint64_t, CachedInode> inodes_;
  std::unordered_set<uint64_t> listed_before_;
  // ino -> (the newest seq revoked, when). expire() forgets a record after
  // kRevokedKeepMs: by then any reply sent before the revoke was absorbed
  // (and any grant in it ran out, unless mds_lease_ms is longer).
  std::unordered_map<uint64_t, std::pair<uint64_t, int64_t>> revoked_;
  uint64_t generations_ = 0;
};

}  // namespace strata::fuse
