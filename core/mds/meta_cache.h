// The MDS's cache of directory entries and inode-table entries, least
// recently used first out once it holds more than its byte limit. Every
// item is clean (the store's reads already reflect submitted changes), so
// eviction never waits for anything: a client's lease on an evicted item
// simply runs out (docs/FILESYSTEM.md, "Sessions, leases").
//
// A directory made by this MDS starts *complete*: every entry it has is in
// the cache, so a name missing from the cache is missing from the
// directory, and creates in it (an untar, an rsync) cost no store lookup
// of the new name. Evicting any of its entries ends that.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "mds/meta_types.h"

namespace strata::mds {

class MetaCache {
 public:
  explicit MetaCache(uint64_t limit_bytes) : limit_(limit_bytes) {}

  std::optional<DentryRec> dentry(Ino dir, const std::string &name);
  void put_dentry(Ino dir, const DentryRec &d);
  void erase_dentry(Ino dir, const std::string &name);

  // dir (just made, empty) has all its entries here from now on, until one
  // of them is evicted or forget_dir(dir).
  void mark_complete(Ino dir) { complete_.insert(dir); }
  bool complete(Ino dir) const { return complete_.count(dir) != 0; }
  void forget_dir(Ino dir) { complete_.erase(dir); }
  // Whether dir has no entries: known only for a complete directory.
  std::optional<bool> known_empty(Ino dir) const;

  std::optional<InodeRec> inode(Ino ino);
  void put_inode(const InodeRec &i);
  void erase_inode(Ino ino);

  uint64_t bytes() const { return bytes_; }
  uint64_t limit() const { return limit_; }
  uint64_t items() const { return lru_.size(); }
  uint64_t evictions() const { return evictions_; }

 private:
  // Dentries are keyed (dir, name); table inodes (kTableDir, "<ino>").
  using Key = std::pair<Ino, std::string>;
  static constexpr Ino kTableDir = ~Ino(0);
  struct Item {
    DentryRec dentry;  // for table inodes: dentry.inode holds the inode
    uint64_t bytes = 0;
    std::list<Key>::iterator pos;
  };
  static uint64_t size_of(const DentryRec &d);
  void put(Key k, DentryRec d);
  void erase(const Key &k);
  std::optional<DentryRec> get(const Key &k);
  void evict();

  uint64_t limit_;
  uint64_t bytes_ = 0;
  uint64_t evictions_ = 0;
  std::map<Key, Item> items_;
  std::list<Key> lru_;  // front: most recently used
  std::unordered_set<Ino> complete_;
};

}  // namespace strata::mds
