#include "lease_cache.h"

#include <algorithm>

namespace strata::fuse {

bool LeaseCache::refused_locked(uint64_t ino, const LeaseGrant &lease) const {
  if (lease.seq == 0) return false;  // assumed by this client; adopt() checks the MDS's
  auto it = revoked_.find(ino);
  return it != revoked_.end() && lease.seq <= it->second.first;
}

void LeaseCache::put_inode(const InodeAttr &attr, const LeaseGrant &lease, uint64_t cover,
                           uint64_t parent) {
  std::lock_guard<std::mutex> l(mu_);
  if (cover == 0 && refused_locked(attr.ino, lease)) return;
  uint64_t gen = 0;
  if (cover != 0) {
    auto d = dirs_.find(cover);
    if (d == dirs_.end()) return;  // no lease to cache it under
    gen = d->second.generation;
    parent = cover;
  }
  auto &c = inodes_[attr.ino];
  if (parent == 0) parent = c.parent;
  c = CachedInode{attr, lease, cover, gen, parent};
}

uint64_t LeaseCache::parent_of(uint64_t ino) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = inodes_.find(ino);
  return it == inodes_.end() ? 0 : it->second.parent;
}

int64_t LeaseCache::expiry_locked(const CachedInode &c) const {
  if (c.cover == 0) return c.lease.expires_ms;
  auto d = dirs_.find(c.cover);
  if (d == dirs_.end() || d->second.generation != c.cover_generation) return 0;
  return d->second.lease.expires_ms;
}

uint64_t LeaseCache::cover_of(uint64_t ino) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = inodes_.find(ino);
  return it == inodes_.end() ? 0 : it->second.cover;
}

void LeaseCache::adopt(uint64_t ino, const LeaseGrant &lease) {
  std::lock_guard<std::mutex> l(mu_);
  if (refused_locked(ino, lease)) return;
  if (auto d = dirs_.find(ino);
      d != dirs_.end() && d->second.lease.seq == 0 && d->second.lease.kind == lease.kind)
    d->second.lease = lease;  // same generation: what it covers stays
  if (auto c = inodes_.find(ino); c != inodes_.end() && c->second.cover == 0 &&
                                  c->second.lease.seq == 0 && c->second.lease.kind == lease.kind)
    c->second.lease = lease;
}

std::optional<std::pair<LeaseGrant, bool>> LeaseCache::dir_lease(uint64_t dir,
                                                                 int64_t now_ms) const {
  std::lock_guard<std::mutex> l(mu_);
  const CachedDir *d = live_dir(dir, now_ms);
  if (!d) return std::nullopt;
  return std::make_pair(d->lease, d->complete);
}

std::optional<std::pair<InodeAttr, int64_t>> LeaseCache::inode(uint64_t ino, int64_t now_ms) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return std::nullopt;
  int64_t expires = expiry_locked(it->second);
  if (expires <= now_ms) return std::nullopt;
  return std::make_pair(it->second.attr, expires - now_ms);
}

void LeaseCache::update_inode(const InodeAttr &attr) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = inodes_.find(attr.ino);
  if (it != inodes_.end()) it->second.attr = attr;
}

void LeaseCache::put_dir_lease(uint64_t dir, const LeaseGrant &lease, bool /*complete*/) {
  std::lock_guard<std::mutex> l(mu_);
  if (refused_locked(dir, lease)) return;
  CachedDir &d = dirs_[dir];
  // The same grant renewed keeps what it covers; a new grant (after a
  // revoke, or one that ran out) starts over: entries (and inline inodes,
  // through the generation) cached under the old one may be stale.
  // A lease assumed before the MDS named it (seq 0) is the same grant.
  bool same = d.generation != 0 && d.lease.kind == lease.kind &&
              (d.lease.seq == lease.seq || d.lease.seq == 0);
  if (!same) {
    remember_listed(dir, d);
    d.entries.clear();
    d.absent.clear();
    d.misses = 0;
    d.complete = false;
    d.generation = ++generations_;
  }
  d.lease = lease;
}

void LeaseCache::put_entry(uint64_t dir, const std::string &name, DirEntry e) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  it->second.entries[name] = e;
  it->second.absent.erase(name);
}

void LeaseCache::put_absent(uint64_t dir, const std::string &name, uint64_t seq) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end() || seq == 0 || it->second.lease.seq != seq) return;
  CachedDir &d = it->second;
  if (d.complete || d.entries.count(name) || d.absent.size() >= kMaxAbsent) return;
  d.absent.insert(name);
}

void LeaseCache::note_change(CachedDir &d, const std::string &name) {
  ++d.changes;
  if (d.listings > 0) d.changed[name] = d.changes;
}

uint64_t LeaseCache::begin_listing(uint64_t dir) {
  std::lock_guard<std::mutex> l(mu_);
  // Before the first page is asked for, so also before any lease on dir:
  // a placeholder (no lease: it answers nothing) keeps the count.
  CachedDir &d = dirs_[dir];
  ++d.listings;
  return d.changes;
}

void LeaseCache::put_listed(uint64_t dir, const std::string &name, DirEntry e, uint64_t since) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  CachedDir &d = it->second;
  auto c = d.changed.find(name);
  if (c != d.changed.end() && c->second > since) return;  // ours is newer
  d.entries[name] = e;
  d.absent.erase(name);
}

void LeaseCache::end_listing(uint64_t dir) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end() || it->second.listings == 0) return;
  if (--it->second.listings == 0) it->second.changed.clear();
}

bool LeaseCache::note_miss(uint64_t dir, uint32_t nth) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end() || it->second.complete) return false;
  return ++it->second.misses == nth;
}

void LeaseCache::remember_listed(uint64_t dir, const CachedDir &d) {
  if (!d.complete) return;
  if (listed_before_.size() >= kMaxListedBefore) listed_before_.clear();
  listed_before_.insert(dir);
}

bool LeaseCache::listed_before(uint64_t dir) const {
  std::lock_guard<std::mutex> l(mu_);
  if (listed_before_.count(dir)) return true;
  // Ran out, not yet swept by expire().
  auto it = dirs_.find(dir);
  return it != dirs_.end() && it->second.complete;
}

uint64_t LeaseCache::dir_seq(uint64_t dir) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  return it == dirs_.end() ? 0 : it->second.lease.seq;
}

void LeaseCache::mark_complete(uint64_t dir, uint64_t seq) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end() && seq != 0 && it->second.lease.seq == seq) {
    it->second.complete = true;
    it->second.absent.clear();  // every name not listed is
  }
}

void LeaseCache::mark_new(uint64_t dir) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) {
    it->second.complete = true;
    it->second.absent.clear();
  }
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
  d->used_ms = now_ms;
  auto it = d->entries.find(name);
  if (it != d->entries.end()) {
    r.found = Found::kEntry;
    r.entry = it->second;
  } else if (d->complete || d->absent.count(name)) {
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
  d->used_ms = now_ms;
  return std::vector<std::pair<std::string, DirEntry>>(d->entries.begin(), d->entries.end());
}

void LeaseCache::created(uint64_t dir, const std::string &name, DirEntry e) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  it->second.entries[name] = e;
  it->second.absent.erase(name);
  note_change(it->second, name);
}

// Our own change, so the name is known to be gone (in a complete
// directory that goes without saying).
void LeaseCache::removed(uint64_t dir, const std::string &name) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  CachedDir &d = it->second;
  d.entries.erase(name);
  if (!d.complete && d.absent.size() < kMaxAbsent) d.absent.insert(name);
  note_change(d, name);
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
    CachedDir &d = from->second;
    d.entries.erase(name);
    if (flags & kExchange) {
      if (other)
        d.entries[name] = *other;
      else
        d.complete = false;
      d.absent.erase(name);
    } else if (!d.complete && d.absent.size() < kMaxAbsent) {
      d.absent.insert(name);
    }
    note_change(d, name);
  }
  if (to != dirs_.end()) {
    CachedDir &d = to->second;
    d.absent.erase(new_name);
    note_change(d, new_name);
    if (moving) {
      d.entries[new_name] = *moving;
    } else {
      d.entries.erase(new_name);
      d.complete = false;
    }
  }
}

std::vector<uint64_t> LeaseCache::renewable(int64_t now_ms, int64_t expiring_before,
                                            int64_t used_since) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<uint64_t> out;
  for (const auto &[ino, d] : dirs_)
    if (d.lease.expires_ms > now_ms && d.lease.expires_ms < expiring_before && d.lease.seq != 0 &&
        d.used_ms >= used_since)
      out.push_back(ino);
  return out;
}

void LeaseCache::renewed(uint64_t ino, const LeaseGrant &lease) {
  std::lock_guard<std::mutex> l(mu_);
  if (auto d = dirs_.find(ino);
      d != dirs_.end() && d->second.lease.kind == lease.kind && d->second.lease.seq == lease.seq)
    d->second.lease.expires_ms = std::max(d->second.lease.expires_ms, lease.expires_ms);
  if (auto c = inodes_.find(ino); c != inodes_.end() && c->second.cover == 0 &&
                                  c->second.lease.kind == lease.kind &&
                                  c->second.lease.seq == lease.seq)
    c->second.lease.expires_ms = std::max(c->second.lease.expires_ms, lease.expires_ms);
}

std::vector<uint64_t> LeaseCache::covered(uint64_t dir) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<uint64_t> out;
  auto d = dirs_.find(dir);
  if (d == dirs_.end()) return out;
  for (const auto &[ino, c] : inodes_)
    if (c.cover == dir && c.cover_generation == d->second.generation) out.push_back(ino);
  return out;
}

std::vector<std::string> LeaseCache::names(uint64_t dir) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return out;
  for (const auto &[name, e] : it->second.entries) out.push_back(name);
  out.insert(out.end(), it->second.absent.begin(), it->second.absent.end());
  return out;
}

void LeaseCache::revoked(uint64_t ino, uint64_t seq, int64_t now_ms) {
  std::lock_guard<std::mutex> l(mu_);
  dirs_.erase(ino);
  inodes_.erase(ino);
  auto &r = revoked_[ino];
  r.first = std::max(r.first, seq);
  r.second = now_ms;
}

void LeaseCache::drop(uint64_t ino) {
  std::lock_guard<std::mutex> l(mu_);
  // What the directory's lease covered goes with it (its inline inodes
  // no longer find their generation; expire() sweeps them).
  dirs_.erase(ino);
  inodes_.erase(ino);
}

size_t LeaseCache::expire(int64_t now_ms) {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (it->second.lease.expires_ms <= now_ms && it->second.listings == 0) {
      remember_listed(it->first, it->second);
      n += 1 + it->second.entries.size();
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = inodes_.begin(); it != inodes_.end();) {
    if (expiry_locked(it->second) <= now_ms) {
      ++n;
      it = inodes_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(revoked_,
                [&](const auto &r) { return r.second.second + kRevokedKeepMs <= now_ms; });
  return n;
}

void LeaseCache::clear() {
  std::lock_guard<std::mutex> l(mu_);
  dirs_.clear();
  inodes_.clear();  // revoked_ stays: those grants are still void
}

LeaseCache::Counts LeaseCache::counts() const {
  std::lock_guard<std::mutex> l(mu_);
  Counts c;
  c.dirs = dirs_.size();
  c.inodes = inodes_.size();
  for (const auto &[ino, d] : dirs_) {
    c.entries += d.entries.size() + d.absent.size();
    c.complete_dirs += d.complete ? 1 : 0;
  }
  return c;
}

}  // namespace strata::fuse
