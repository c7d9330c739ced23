#include "filestore/fd_cache.h"

namespace strata::filestore {

SharedFd FdCache::find(FileId id) {
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

SharedFd FdCache::insert(FileId id, UniqueFd fd) {
  auto handle = std::make_shared<const UniqueFd>(std::move(fd));
  SharedFd evicted;  // closed after the lock is released
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  lru_.emplace_front(id, handle);
  index_.emplace(id, lru_.begin());
  if (lru_.size() > capacity_) {
    evicted = std::move(lru_.back().second);
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return handle;
}

void FdCache::erase(FileId id) {
  SharedFd dropped;
  std::lock_guard lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return;
  dropped = std::move(it->second->second);
  lru_.erase(it->second);
  index_.erase(it);
}

void FdCache::clear() {
  std::list<Entry> dropped;
  std::lock_guard lock(mu_);
  dropped.swap(lru_);
  index_.clear();
}

size_t FdCache::size() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace strata::filestore
