#include "mds/memory_meta_store.h"

#include <cerrno>

namespace strata::mds {

MemoryMetaStore::MemoryMetaStore() {
  thread_ = std::thread([this] { run(); });
}

MemoryMetaStore::~MemoryMetaStore() { close(); }

Result<RecoveredState> MemoryMetaStore::open(uint64_t incarnation) {
  std::lock_guard lk(mu_);
  if (incarnation < incarnation_)
    return Status::Error(ECANCELED, "memory store: incarnation " + std::to_string(incarnation) +
                                        " is older than " + std::to_string(incarnation_));
  incarnation_ = incarnation;
  fenced_ = false;
  if (!inodes_.count(kRootIno)) {
    InodeRec root;
    root.ino = kRootIno;
    root.type = FileType::kDirectory;
    root.mode = 0755;
    root.nlink = 2;
    inodes_[kRootIno] = root;
    dirs_[kRootIno];
    dirs_[kStrayIno];
  }
  RecoveredState rs;
  rs.ino_next = ino_next_;
  for (auto &[id, s] : sessions_) rs.sessions.push_back(s);
  rs.pending_purges = purges_;
  return rs;
}

void MemoryMetaStore::submit(MetaUpdate u, std::function<void(Status)> on_durable) {
  std::lock_guard lk(mu_);
  Status st = Status::OK();
  if (fenced_ || stopping_) {
    st = Status::Error(ECANCELED, "memory store: fenced by a newer incarnation");
  } else {
    for (DentryChange &c : u.dentries) {
      auto &d = dirs_[c.dir];
      if (c.dentry) {
        d[c.name] = *c.dentry;
        if (c.dentry->type == FileType::kDirectory) dirs_[c.dentry->ino];
      } else {
        d.erase(c.name);
      }
    }
    for (InodeChange &c : u.inodes) {
      if (c.inode)
        inodes_[c.ino] = *c.inode;
      else
        inodes_.erase(c.ino);
    }
    if (u.ino_next) ino_next_ = std::max(ino_next_, *u.ino_next);
    for (SessionChange &c : u.sessions) {
      if (c.session)
        sessions_[c.id] = *c.session;
      else
        sessions_.erase(c.id);
    }
    for (PurgeRec &p : u.purges) {
      purges_.push_back(p);
      stats_.purged_objects++;
    }
    stats_.journal_entries++;
    stats_.journal_bytes_unapplied += 64;
  }
  ++submitted_;
  pending_.emplace_back(st, std::move(on_durable));
  cv_.notify_all();
}

void MemoryMetaStore::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || (!held_ && !pending_.empty()); });
    if (pending_.empty() && stopping_) return;
    if (held_ && !stopping_) continue;
    auto [st, cb] = std::move(pending_.front());
    pending_.pop_front();
    stats_.journal_writes++;
    lk.unlock();
    if (cb) cb(st);
    lk.lock();
    ++completed_;
    cv_.notify_all();
  }
}

Status MemoryMetaStore::flush() {
  std::unique_lock lk(mu_);
  uint64_t target = submitted_;
  cv_.wait(lk, [&] { return completed_ >= target || (stopping_ && pending_.empty()); });
  return Status::OK();
}

Result<std::optional<DentryRec>> MemoryMetaStore::lookup(Ino dir, std::string_view name) {
  ++reads_;
  std::lock_guard lk(mu_);
  auto d = dirs_.find(dir);
  if (d == dirs_.end()) return std::optional<DentryRec>();
  auto e = d->second.find(std::string(name));
  if (e == d->second.end()) return std::optional<DentryRec>();
  return std::optional<DentryRec>(e->second);
}

Result<DirPage> MemoryMetaStore::list(Ino dir, std::string_view after, size_t max) {
  ++reads_;
  std::lock_guard lk(mu_);
  DirPage page;
  auto d = dirs_.find(dir);
  if (d == dirs_.end()) {
    page.end = true;
    return page;
  }
  auto it = after.empty() ? d->second.begin() : d->second.upper_bound(std::string(after));
  for (; it != d->second.end() && page.entries.size() < max; ++it)
    page.entries.push_back(it->second);
  page.end = it == d->second.end();
  return page;
}

Result<std::optional<InodeRec>> MemoryMetaStore::get_inode(Ino ino) {
  std::lock_guard lk(mu_);
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return std::optional<InodeRec>();
  return std::optional<InodeRec>(it->second);
}

MetaStoreStats MemoryMetaStore::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

void MemoryMetaStore::close() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void MemoryMetaStore::hold_durability(bool hold) {
  std::lock_guard lk(mu_);
  held_ = hold;
  cv_.notify_all();
}

void MemoryMetaStore::fence() {
  std::lock_guard lk(mu_);
  fenced_ = true;
}

std::vector<PurgeRec> MemoryMetaStore::purges() const {
  std::lock_guard lk(mu_);
  return purges_;
}

std::map<uint64_t, SessionRec> MemoryMetaStore::sessions() const {
  std::lock_guard lk(mu_);
  return sessions_;
}

}  // namespace strata::mds
