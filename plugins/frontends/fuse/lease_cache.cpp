#include "lease_cache.h"

namespace strata::fuse {

void LeaseCache::put_inode(const InodeAttr &attr, const LeaseGrant &lease) {
  std::lock_guard<std::mutex> l(mu_);
  inodes_[attr.ino] = CachedInode{attr, lease};
}

std::optional<std::pair<InodeAttr, int64_t>> LeaseCache::inode(uint64_t ino, int64_t now_ms) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end() || it->second.lease.expires_ms <= now_ms) return std::nullopt;
  return std::make_pair(it->second.attr, it->second.lease.expires_ms - now_ms);
}

void LeaseCache::update_inode(const InodeAttr &attr) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = inodes_.find(attr.ino);
  if (it != inodes_.end()) it->second.attr = attr;
}

void LeaseCache::put_dir_lease(uint64_t dir, const LeaseGrant &lease, bool /*complete*/) {
  std::lock_guard<std::mutex> l(mu_);
  CachedDir &d = dirs_[dir];
  // The same grant renewed keeps what it covers; a new grant (after a
  // revoke, or one that ran out) starts over: entries cached under the
  // old one may be stale.
  if (d.lease.seq != lease.seq) {
    d.entries.clear();
    d.complete = false;
  }
  d.lease = lease;
}

void LeaseCache::put_entry(uint64_t dir, const std::string &name, DirEntry e) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) it->second.entries[name] = e;
}

uint64_t LeaseCache::dir_seq(uint64_t dir) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  return it == dirs_.end() ? 0 : it->second.lease.seq;
}

void LeaseCache::mark_complete(uint64_t dir, uint64_t seq) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end() && seq != 0 && it->second.lease.seq == seq) it->second.complete = true;
}

const LeaseCache::CachedDir *LeaseCache::live_dir(uint64_t dir, int64_t now_ms) const {
  auto it = dirs_.find(dir);
  if (it == dirs_.end() || it->second.lease.expires_ms <= now_ms) return nullptr;
  return &it->second;
}

LeaseCache::LookupResult LeaseCache::lookup(uint64_t dir, const std::string &name,
                                            int64_t now_ms) const {
  std::lock_guard<std::mutex> l(mu_);
  LookupResult r;
  const CachedDir *d = live_dir(dir, now_ms);
  if (!d) return r;
  auto it = d->entries.find(name);
  if (it != d->entries.end()) {
    r.found = Found::kEntry;
    r.entry = it->second;
  } else if (d->complete) {
    r.found = Found::kNegative;
  } else {
    return r;
  }
  r.valid_ms = d->lease.expires_ms - now_ms;
  return r;
}

std::optional<std::vector<std::pair<std::string, DirEntry>>> LeaseCache::list(
    uint64_t dir, int64_t now_ms) const {
  std::lock_guard<std::mutex> l(mu_);
  const CachedDir *d = live_dir(dir, now_ms);
  if (!d || !d->complete) return std::nullopt;
  return std::vector<std::pair<std::string, DirEntry>>(d->entries.begin(), d->entries.end());
}

void LeaseCache::created(uint64_t dir, const std::string &name, DirEntry e) {
  put_entry(dir, name, e);
}

void LeaseCache::removed(uint64_t dir, const std::string &name) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) it->second.entries.erase(name);
}

void LeaseCache::renamed(uint64_t dir, const std::string &name, uint64_t new_dir,
                         const std::string &new_name, uint32_t flags) {
  constexpr uint32_t kExchange = 2;
  std::lock_guard<std::mutex> l(mu_);
  auto from = dirs_.find(dir);
  auto to = dirs_.find(new_dir);
  std::optional<DirEntry> moving, other;
  if (from != dirs_.end()) {
    auto e = from->second.entries.find(name);
    if (e != from->second.entries.end()) moving = e->second;
  }
  if (to != dirs_.end()) {
    auto e = to->second.entries.find(new_name);
    if (e != to->second.entries.end()) other = e->second;
  }
  // What we do not know we cannot place: a complete directory that would
  // miss the moved entry is no longer complete.
  if (from != dirs_.end()) {
    from->second.entries.erase(name);
    if (flags & kExchange) {
      if (other)
        from->second.entries[name] = *other;
      else
        from->second.complete = false;
    }
  }
  if (to != dirs_.end()) {
    if (moving)
      to->second.entries[new_name] = *moving;
    else {
      to->second.entries.erase(new_name);
      to->second.complete = false;
    }
  }
}

std::vector<std::string> LeaseCache::names(uint64_t dir) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  auto it = dirs_.find(dir);
  if (it != dirs_.end())
    for (const auto &[name, e] : it->second.entries) out.push_back(name);
  return out;
}

void LeaseCache::drop(uint64_t ino) {
  std::lock_guard<std::mutex> l(mu_);
  dirs_.erase(ino);
  inodes_.erase(ino);
}

size_t LeaseCache::expire(int64_t now_ms) {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (it->second.lease.expires_ms <= now_ms) {
      n += 1 + it->second.entries.size();
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = inodes_.begin(); it != inodes_.end();) {
    if (it->second.lease.expires_ms <= now_ms) {
      ++n;
      it = inodes_.erase(it);
    } else {
      ++it;
    }
  }
  return n;
}

void LeaseCache::clear() {
  std::lock_guard<std::mutex> l(mu_);
  dirs_.clear();
  inodes_.clear();
}

LeaseCache::Counts LeaseCache::counts() const {
  std::lock_guard<std::mutex> l(mu_);
  Counts c;
  c.dirs = dirs_.size();
  c.inodes = inodes_.size();
  for (const auto &[ino, d] : dirs_) {
    c.entries += d.entries.size();
    c.complete_dirs += d.complete ? 1 : 0;
  }
  return c;
}

}  // namespace strata::fuse
