#include "mds/meta_cache.h"

namespace strata::mds {

uint64_t MetaCache::size_of(const DentryRec &d) {
  uint64_t n = sizeof(Item) + sizeof(Key) + 2 * d.name.size() + 64;
  if (d.inode) {
    n += sizeof(InodeRec) + d.inode->symlink_target.size() + d.inode->inline_data.size();
    for (const auto &[k, v] : d.inode->xattrs) n += k.size() + v.size() + 48;
  }
  return n;
}

std::optional<DentryRec> MetaCache::get(const Key &k) {
  auto it = items_.find(k);
  if (it == items_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second.pos);
  return it->second.dentry;
}

void MetaCache::put(Key k, DentryRec d) {
  erase(k);
  lru_.push_front(k);
  Item item;
  item.bytes = size_of(d);
  item.dentry = std::move(d);
  item.pos = lru_.begin();
  bytes_ += item.bytes;
  items_.emplace(std::move(k), std::move(item));
  evict();
}

void MetaCache::erase(const Key &k) {
  auto it = items_.find(k);
  if (it == items_.end()) return;
  bytes_ -= it->second.bytes;
  lru_.erase(it->second.pos);
  items_.erase(it);
}

void MetaCache::evict() {
  while (bytes_ > limit_ && !lru_.empty()) {
    Key k = lru_.back();
    if (k.first != kTableDir) complete_.erase(k.first);
    erase(k);
    ++evictions_;
  }
}

std::optional<DentryRec> MetaCache::dentry(Ino dir, const std::string &name) {
  return get({dir, name});
}
std::optional<bool> MetaCache::known_empty(Ino dir) const {
  if (!complete(dir)) return std::nullopt;
  auto it = items_.lower_bound(Key{dir, std::string()});
  return it == items_.end() || it->first.first != dir;
}

void MetaCache::put_dentry(Ino dir, const DentryRec &d) { put({dir, d.name}, d); }
void MetaCache::erase_dentry(Ino dir, const std::string &name) { erase({dir, name}); }

std::optional<InodeRec> MetaCache::inode(Ino ino) {
  auto d = get({kTableDir, std::to_string(ino)});
  if (!d || !d->inode) return std::nullopt;
  return d->inode;
}
void MetaCache::put_inode(const InodeRec &i) {
  DentryRec d;
  d.name = std::to_string(i.ino);
  d.ino = i.ino;
  d.inode = i;
  put({kTableDir, d.name}, std::move(d));
}
void MetaCache::erase_inode(Ino ino) { erase({kTableDir, std::to_string(ino)}); }

}  // namespace strata::mds
