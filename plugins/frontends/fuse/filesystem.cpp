// Filesystem: construction, the MDS request helper, attributes and the
// namespace operations (lookup, getattr, setattr, create/unlink/rename...).
// Files' data and locks are in file_ops.cpp, directories and xattrs in
// dir_ops.cpp.
#include "filesystem.h"

#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "proto_convert.h"

namespace strata::fuse {

Filesystem::Filesystem(MdsClient &mds, FileData *data, const MountSettings &settings, LogFn log)
    : mds_(mds), data_(data), settings_(settings), log_(std::move(log)) {
  // Enough write-outs in flight to hide an object write's latency behind
  // a program closing one small file after another.
  if (!settings_.sync_close && data_) {
    CloseWorkers::Options o;
    o.threads = 8;
    o.delay = std::chrono::milliseconds(settings_.writeback_delay_ms);
    const uint64_t limit = settings_.dirty_limit;
    o.over_limit = [data, limit] { return data->buffered_bytes() > limit; };
    closers_ = std::make_unique<CloseWorkers>(std::move(o));
  }
}

Filesystem::~Filesystem() { closers_.reset(); }

void Filesystem::set_root(const InodeAttr &root) { root_ino_ = root.ino; }

void Filesystem::set_session(fuse_session *se) {
  std::lock_guard<std::mutex> l(se_mu_);
  se_ = se;
}

int64_t Filesystem::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t Filesystem::open_files() const {
  std::lock_guard<std::mutex> l(open_mu_);
  return open_.size();
}

void Filesystem::init(fuse_conn_info *conn) {
  if (settings_.writeback_cache && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
    kernel_keeps_times_ = true;
  }
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  if (conn->capable & FUSE_CAP_POSIX_LOCKS) conn->want |= FUSE_CAP_POSIX_LOCKS;
  if (conn->capable & FUSE_CAP_FLOCK_LOCKS) conn->want |= FUSE_CAP_FLOCK_LOCKS;
  // Data goes to objects from our buffers: splice would only add copies.
  conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
  // O_TRUNC arrives as a separate setattr(size 0): one code path.
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
  conn->max_write = settings_.max_write;
  conn->max_read = settings_.max_read;
  conn->max_readahead = std::max(conn->max_readahead, settings_.max_read);
}

std::shared_ptr<ReceivedMessage> Filesystem::request(
    fuse_req_t req, const std::function<void(fsproto::Request::Builder)> &fill, int *err,
    uint32_t timeout_ms) {
  int64_t sent = now_ms();
  auto reply = mds_.call(
      [&](fsproto::Request::Builder r) {
        if (req) fill_caller(caller_of(req), r);
        fill(r);
      },
      err, timeout_ms);
  if (!reply) return nullptr;
  auto r = reply->root<fsproto::Reply>();
  absorb(r, sent);
  *err = r.getResult();
  if (*err > 0) *err = -EIO;  // a positive result is not in the protocol
  return reply;
}

void Filesystem::absorb(fsproto::Reply::Reader r, int64_t sent_ms) {
  uint64_t mds_now = r.getNowMs();
  auto lease_for = [&](uint64_t ino, LeaseGrant *g, bool *complete) {
    for (auto l : r.getLeases())
      if (l.getIno() == ino && l.getKind() != fsproto::LeaseKind::NONE) {
        *g = to_grant(l, mds_now, sent_ms, settings_.lease_margin_ms);
        *complete = l.getComplete();
        return true;
      }
    return false;
  };
  // An inode with no lease of its own is still cached when it is inline
  // in a directory whose lease we hold (the MDS revokes the directory's
  // leases before changing it): a directory, or a file with one link (a
  // hard-linked inode lives in the inode table instead).
  auto keep = [&](fsproto::Inode::Reader in, fsproto::Lease::Reader own, uint64_t cover) {
    if (in.getIno() == 0) return;
    InodeAttr a = to_attr(in);
    LeaseGrant g;
    bool complete = false;
    bool leased = false;
    if (own.getKind() != fsproto::LeaseKind::NONE && own.getIno() == a.ino) {
      g = to_grant(own, mds_now, sent_ms, settings_.lease_margin_ms);
      complete = own.getComplete();
      leased = true;
    } else {
      leased = lease_for(a.ino, &g, &complete);
    }
    bool dir = a.type == FileType::kDirectory;
    if (leased) {
      cache_.put_inode(a, g, 0, cover != a.ino ? cover : 0);
      if (dir && (g.kind == uint32_t(fsproto::LeaseKind::DIR_READ) ||
                  g.kind == uint32_t(fsproto::LeaseKind::DIR_WRITE)))
        cache_.put_dir_lease(a.ino, g, complete);
      return;
    }
    if (cover != 0 && cover != a.ino && (dir || a.nlink <= 1) &&
        cache_.dir_lease(cover, now_ms())) {
      cache_.put_inode(a, LeaseGrant{}, cover);
      return;
    }
    // Under a lease we still hold (our own change: the MDS revokes
    // before others change it) the reply is simply newer.
    if (cache_.inode(a.ino, now_ms())) {
      cache_.update_inode(a);
      return;
    }
    cache_.drop(a.ino);  // what we had is older than this
  };
  fsproto::Lease::Reader none;
  // Directories first: their leases cover the inodes that follow.
  uint64_t parent = r.hasParent() ? r.getParent().getIno() : 0;
  if (r.hasParent()) keep(r.getParent(), none, cache_.cover_of(parent));
  if (r.hasOtherParent())
    keep(r.getOtherParent(), none, cache_.cover_of(r.getOtherParent().getIno()));
  if (r.hasInode()) {
    uint64_t ino = r.getInode().getIno();
    keep(r.getInode(), none, parent != 0 ? parent : cache_.cover_of(ino));
  }
  if (r.hasReplaced()) keep(r.getReplaced(), none, 0);
  uint64_t listed = r.hasInode() ? r.getInode().getIno() : 0;
  for (auto d : r.getEntries()) keep(d.getInode(), d.getLease(), listed);
}

void Filesystem::overlay_local(InodeAttr *a) const {
  std::lock_guard<std::mutex> l(open_mu_);
  auto it = open_.find(a->ino);
  if (it == open_.end() || !it->second.dirty) return;
  a->size = it->second.size;
  a->mtime = it->second.mtime;
  a->ctime = it->second.ctime;
}

double Filesystem::valid_seconds(uint64_t ino) const {
  auto c = cache_.inode(ino, now_ms());
  return c ? double(c->second) / 1000.0 : 0.0;
}

int Filesystem::attr_of(fuse_req_t req, uint64_t ino, InodeAttr *out, double *valid_s) {
  if (auto c = cache_.inode(ino, now_ms())) {
    counters_.cache_hit();
    *out = c->first;
    *valid_s = double(c->second) / 1000.0;
  } else {
    int err = 0;
    auto reply = request(
        req, [&](fsproto::Request::Builder r) { r.initGetattr().setIno(ino); }, &err);
    if (err < 0) return err;
    *out = to_attr(reply->root<fsproto::Reply>().getInode());
    *valid_s = valid_seconds(ino);
  }
  overlay_local(out);
  return 0;
}

fuse_entry_param Filesystem::entry_of(const InodeAttr &a, double valid_s) {
  fuse_entry_param e;
  std::memset(&e, 0, sizeof e);
  e.ino = to_fuse(a.ino);
  e.generation = 0;
  e.attr = to_stat(a);
  e.attr.st_ino = e.ino;
  e.attr_timeout = valid_s;
  e.entry_timeout = kernel_keeps_entries() ? valid_s : 0;
  return e;
}

void Filesystem::reply_entry(fuse_req_t req, const InodeAttr &a) {
  InodeAttr local = a;
  overlay_local(&local);
  fuse_entry_param e = entry_of(local, valid_seconds(a.ino));
  inodes_.looked_up(a.ino);
  if (fuse_reply_entry(req, &e) != 0) inodes_.forget(a.ino, 1);  // the kernel did not take it
}

// A negative entry the kernel may keep as long as the lease lasts.
void Filesystem::reply_negative(fuse_req_t req, int64_t valid_ms) {
  fuse_entry_param e;
  std::memset(&e, 0, sizeof e);
  e.entry_timeout = kernel_keeps_entries() ? double(valid_ms) / 1000.0 : 0;
  fuse_reply_entry(req, &e);
}

void Filesystem::lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  counters_.count(Op::kLookup);
  uint64_t dir = to_mds(parent);
  if (std::strlen(name) > 255) {
    fuse_reply_err(req, ENAMETOOLONG);
    return;
  }
  auto hit = cache_.lookup(dir, name, now_ms());
  if (hit.found != LeaseCache::Found::kMiss && !settings_.default_permissions) {
    // The MDS checks search permission on the directory; so must a cached
    // answer (the parent's attributes unknown: ask the MDS).
    auto p = cache_.inode(dir, now_ms());
    if (!p) hit.found = LeaseCache::Found::kMiss;
    if (p && denied(req, p->first, 1)) {
      fuse_reply_err(req, EACCES);
      return;
    }
  }
  if (hit.found == LeaseCache::Found::kNegative) {
    counters_.cache_hit();
    reply_negative(req, hit.valid_ms);
    return;
  }
  if (hit.found == LeaseCache::Found::kEntry) {
    if (auto c = cache_.inode(hit.entry.ino, now_ms())) {
      counters_.cache_hit();
      reply_entry(req, c->first);
      return;
    }
  }
  if (hit.found == LeaseCache::Found::kMiss && prefetch_listing(req, dir)) {
    hit = cache_.lookup(dir, name, now_ms());
    std::optional<std::pair<InodeAttr, int64_t>> c;
    if (hit.found == LeaseCache::Found::kEntry) c = cache_.inode(hit.entry.ino, now_ms());
    if (hit.found == LeaseCache::Found::kNegative) {
      reply_negative(req, hit.valid_ms);
      return;
    }
    if (c) {
      reply_entry(req, c->first);
      return;
    }
  }
  int err = 0;
  auto reply = request(
      req,
      [&](fsproto::Request::Builder r) {
        auto l = r.initLookup();
        l.setParent(dir);
        l.setName(kj::arrayPtr(reinterpret_cast<const kj::byte *>(name), std::strlen(name)));
      },
      &err);
  if (err == -ENOENT && reply) {
    // Missing under the lease this reply granted: the cache answers for
    // the name from now on, and so may the kernel (a negative entry; a
    // revoke invalidates it with the directory's other names), and a
    // create of it can be decided locally.
    for (auto l : reply->root<fsproto::Reply>().getLeases())
      if (l.getIno() == dir && (l.getKind() == fsproto::LeaseKind::DIR_READ ||
                                l.getKind() == fsproto::LeaseKind::DIR_WRITE))
        cache_.put_absent(dir, name, l.getSeq());
    auto known = cache_.lookup(dir, name, now_ms());
    if (known.found == LeaseCache::Found::kNegative) {
      reply_negative(req, known.valid_ms);
      return;
    }
  }
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  InodeAttr a = to_attr(reply->root<fsproto::Reply>().getInode());
  cache_.put_entry(dir, name, DirEntry{a.ino, a.type});
  reply_entry(req, a);
}

void Filesystem::forget(fuse_ino_t ino, uint64_t nlookup) {
  counters_.count(Op::kForget);
  uint64_t m = to_mds(ino);
  if (inodes_.forget(m, nlookup) && m != root_ino_) {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(m);
    if (it != open_.end() && it->second.openers == 0 && !it->second.dirty) open_.erase(it);
  }
}

void Filesystem::getattr(fuse_req_t req, fuse_ino_t ino) {
  counters_.count(Op::kGetattr);
  InodeAttr a;
  double valid = 0;
  if (int err = attr_of(req, to_mds(ino), &a, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  struct stat st = to_stat(a);
  st.st_ino = ino;
  fuse_reply_attr(req, &st, valid);
}

void Filesystem::setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                         fuse_file_info *) {
  counters_.count(Op::kSetattr);
  uint64_t m = to_mds(ino);
  if (InodeAttr a;
      times_locally(req, m, attr, to_set, &a) || async_setattr(req, m, attr, to_set, &a)) {
    overlay_local(&a);
    struct stat st = to_stat(a);
    st.st_ino = ino;
    fuse_reply_attr(req, &st, valid_seconds(m));
    return;
  }
  if (InodeAttr a; (to_set & FUSE_SET_ATTR_SIZE) && truncate_locally(req, m, attr, to_set, &a)) {
    overlay_local(&a);
    struct stat st = to_stat(a);
    st.st_ino = ino;
    fuse_reply_attr(req, &st, valid_seconds(m));
    return;
  }
  InodeAttr cur;
  double valid = 0;
  if (int err = attr_of(req, m, &cur, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    if (cur.type == FileType::kDirectory) {
      fuse_reply_err(req, EISDIR);
      return;
    }
    if (!data_) {
      fuse_reply_err(req, EIO);
      return;
    }
    FileLayout f = layout_of(cur);
    bool open_here = false;
    {
      std::lock_guard<std::mutex> l(open_mu_);
      auto it = open_.find(m);
      if (it != open_.end()) f = it->second.layout, open_here = true;
    }
    // The MDS cuts an inline file's bytes itself; only an open file here
    // keeps a copy of them to cut.
    int err =
        f.inline_data && !open_here ? 0 : data_->truncate(f, cur.size, uint64_t(attr->st_size));
    if (err < 0) {
      fuse_reply_err(req, -err);
      return;
    }
  }
  uint32_t mask = 0;
  auto reply = [&](fsproto::Request::Builder r) {
    auto s = r.initSetattr();
    s.setIno(m);
    auto a = s.initAttr();
    if (to_set & FUSE_SET_ATTR_MODE)
      mask |= fsproto::SetAttr::MASK_MODE, a.setMode(attr->st_mode & 07777);
    if (to_set & FUSE_SET_ATTR_UID) mask |= fsproto::SetAttr::MASK_UID, a.setUid(attr->st_uid);
    if (to_set & FUSE_SET_ATTR_GID) mask |= fsproto::SetAttr::MASK_GID, a.setGid(attr->st_gid);
    if (to_set & FUSE_SET_ATTR_SIZE)
      mask |= fsproto::SetAttr::MASK_SIZE, a.setSize(uint64_t(attr->st_size));
    if (to_set & FUSE_SET_ATTR_ATIME_NOW)
      mask |= fsproto::SetAttr::MASK_ATIME_NOW;
    else if (to_set & FUSE_SET_ATTR_ATIME) {
      mask |= fsproto::SetAttr::MASK_ATIME;
      fill_time(a.initAtime(), Time{attr->st_atim.tv_sec, uint32_t(attr->st_atim.tv_nsec)});
    }
    if (to_set & FUSE_SET_ATTR_MTIME_NOW)
      mask |= fsproto::SetAttr::MASK_MTIME_NOW;
    else if (to_set & FUSE_SET_ATTR_MTIME) {
      mask |= fsproto::SetAttr::MASK_MTIME;
      fill_time(a.initMtime(), Time{attr->st_mtim.tv_sec, uint32_t(attr->st_mtim.tv_nsec)});
    }
    if (to_set & FUSE_SET_ATTR_CTIME) {
      mask |= fsproto::SetAttr::MASK_CTIME;
      fill_time(a.initCtime(), Time{attr->st_ctim.tv_sec, uint32_t(attr->st_ctim.tv_nsec)});
    }
    if (to_set & kSetAttrKillSuidgid) mask |= fsproto::SetAttr::MASK_KILL_SUIDGID;
    a.setMask(mask);
  };
  int err = 0;
  auto r = request(req, reply, &err);
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  InodeAttr a = to_attr(r->root<fsproto::Reply>().getInode());
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(m);
    if (it != open_.end()) {
      // What the MDS now has is the truth: a reported size is not dirty.
      if (to_set & FUSE_SET_ATTR_SIZE) it->second.size = a.size;
      if ((to_set & FUSE_SET_ATTR_SIZE) && !it->second.dirty &&
          it->second.data_report == DataReport::kUnchanged)
        it->second.layout.inline_data = a.inline_data;
      if (to_set & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
        it->second.mtime = a.mtime;
    }
  }
  overlay_local(&a);
  struct stat st = to_stat(a);
  st.st_ino = ino;
  fuse_reply_attr(req, &st, valid_seconds(m));
}

void Filesystem::readlink(fuse_req_t req, fuse_ino_t ino) {
  counters_.count(Op::kReadlink);
  InodeAttr a;
  double valid = 0;
  if (int err = attr_of(req, to_mds(ino), &a, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  if (a.type != FileType::kSymlink) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  fuse_reply_readlink(req, a.symlink_target.c_str());
}

void Filesystem::make(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev,
                      const char *symlink_target) {
  FileType type = symlink_target ? FileType::kSymlink : type_of_mode(mode);
  counters_.count(type == FileType::kDirectory ? Op::kMkdir
                  : type == FileType::kSymlink ? Op::kSymlink
                                               : Op::kMknod);
  if (type == FileType::kUnknown) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  if (std::strlen(name) > 255) {
    fuse_reply_err(req, ENAMETOOLONG);
    return;
  }
  if (symlink_target && std::strlen(symlink_target) > 4095) {
    fuse_reply_err(req, ENAMETOOLONG);
    return;
  }
  uint64_t dir = to_mds(parent);
  if (InodeAttr a; async_make(req, dir, name, type, mode, rdev, symlink_target, &a)) {
    reply_entry(req, a);
    return;
  }
  int err = 0;
  auto reply = request(
      req,
      [&](fsproto::Request::Builder r) {
        auto c = r.initCreate();
        c.setParent(dir);
        c.setName(kj::arrayPtr(reinterpret_cast<const kj::byte *>(name), std::strlen(name)));
        c.setType(fsproto::FileType(uint16_t(type)));
        c.setMode(type == FileType::kSymlink ? 0777 : (mode & 07777));
        c.setRdev(uint32_t(rdev));
        if (symlink_target) c.setSymlinkTarget(symlink_target);
        c.setExclusive(true);
        c.setUmask(fuse_req_ctx(req)->umask);
        fill_time(r.initTime(), time_now());  // as in create (file_ops.cpp)
      },
      &err);
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  InodeAttr a = to_attr(reply->root<fsproto::Reply>().getInode());
  cache_.created(dir, name, DirEntry{a.ino, a.type});
  // A directory just made is empty: under a lease on it, its listing is
  // whole from the start.
  if (type == FileType::kDirectory) cache_.mark_complete(a.ino, cache_.dir_seq(a.ino));
  reply_entry(req, a);
}

void Filesystem::unlink(fuse_req_t req, fuse_ino_t parent, const char *name, bool directory) {
  counters_.count(directory ? Op::kRmdir : Op::kUnlink);
  uint64_t dir = to_mds(parent);
  settle_victim(dir, name);
  if (async_unlink(req, dir, name, directory)) {
    fuse_reply_err(req, 0);
    return;
  }
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        auto u = r.initUnlink();
        u.setParent(dir);
        u.setName(kj::arrayPtr(reinterpret_cast<const kj::byte *>(name), std::strlen(name)));
        u.setDirectory(directory);
      },
      &err);
  if (err == 0) cache_.removed(dir, name);
  fuse_reply_err(req, -err);
}

void Filesystem::rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                        const char *newname, unsigned int flags) {
  counters_.count(Op::kRename);
  if (flags & ~unsigned(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
    fuse_reply_err(req, EINVAL);  // RENAME_WHITEOUT: overlayfs only
    return;
  }
  if (std::strlen(newname) > 255) {
    fuse_reply_err(req, ENAMETOOLONG);
    return;
  }
  uint64_t from = to_mds(parent), to = to_mds(newparent);
  settle_victim(to, newname);
  if (async_rename(req, from, name, to, newname, flags)) {
    fuse_reply_err(req, 0);
    return;
  }
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        auto n = r.initRename();
        n.setParent(from);
        n.setName(kj::arrayPtr(reinterpret_cast<const kj::byte *>(name), std::strlen(name)));
        n.setNewParent(to);
        n.setNewName(
            kj::arrayPtr(reinterpret_cast<const kj::byte *>(newname), std::strlen(newname)));
        n.setFlags(flags);
      },
      &err);
  if (err == 0) cache_.renamed(from, name, to, newname, flags);
  fuse_reply_err(req, -err);
}

void Filesystem::link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname) {
  counters_.count(Op::kLink);
  uint64_t dir = to_mds(newparent);
  {
    // Before the link exists: an unlink racing with it must not take the
    // other name for the last.
    std::lock_guard<std::mutex> l(open_mu_);
    if (auto it = open_.find(to_mds(ino)); it != open_.end()) it->second.only_link = false;
  }
  int err = 0;
  auto reply = request(
      req,
      [&](fsproto::Request::Builder r) {
        auto k = r.initLink();
        k.setIno(to_mds(ino));
        k.setNewParent(dir);
        k.setNewName(
            kj::arrayPtr(reinterpret_cast<const kj::byte *>(newname), std::strlen(newname)));
      },
      &err);
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  InodeAttr a = to_attr(reply->root<fsproto::Reply>().getInode());
  cache_.created(dir, newname, DirEntry{a.ino, a.type});
  reply_entry(req, a);
}

void Filesystem::statfs(fuse_req_t req, fuse_ino_t ino) {
  counters_.count(Op::kStatfs);
  int err = 0;
  auto reply = request(
      req, [&](fsproto::Request::Builder r) { r.initStatfs().setIno(to_mds(ino)); }, &err,
      kStatfsWaitMs);
  if (err == -ETIMEDOUT) {
    std::lock_guard<std::mutex> l(statfs_mu_);
    if (last_statfs_) {
      if (!statfs_stale_logged_.exchange(true))
        log_(STRATA_LOG_WARN, "statfs: the MDS did not answer within " +
                                  std::to_string(kStatfsWaitMs) +
                                  " ms; answering with the last figures (logged once)");
      fuse_reply_statfs(req, &*last_statfs_);
      return;
    }
  }
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  statfs_stale_logged_ = false;
  auto s = reply->root<fsproto::Reply>().getStatfs();
  struct statvfs v;
  std::memset(&v, 0, sizeof v);
  uint32_t bs = s.getBlockSize() ? s.getBlockSize() : 4096;
  v.f_bsize = bs;
  v.f_frsize = bs;
  v.f_blocks = s.getTotalBytes() / bs;
  v.f_bfree = s.getFreeBytes() / bs;
  v.f_bavail = s.getAvailBytes() / bs;
  v.f_files = s.getFiles();
  v.f_ffree = s.getFilesFree();
  v.f_favail = s.getFilesFree();
  v.f_namemax = s.getNameMax();
  {
    std::lock_guard<std::mutex> l(statfs_mu_);
    last_statfs_ = v;
  }
  fuse_reply_statfs(req, &v);
}

void Filesystem::access(fuse_req_t req, fuse_ino_t ino, int mask) {
  counters_.count(Op::kAccess);
  InodeAttr a;
  double valid = 0;
  if (int err = attr_of(req, to_mds(ino), &a, &valid); err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  const fuse_ctx *ctx = fuse_req_ctx(req);
  if (mask == F_OK || ctx->uid == 0) {
    // root may do anything but execute a file nobody may execute
    bool x_denied =
        ctx->uid == 0 && (mask & X_OK) && a.type != FileType::kDirectory && !(a.mode & 0111);
    fuse_reply_err(req, x_denied ? EACCES : 0);
    return;
  }
  uint32_t bits = a.mode & 07;
  if (ctx->uid == a.uid) {
    bits = (a.mode >> 6) & 07;
  } else {
    bool in_group = ctx->gid == a.gid;
    gid_t groups[64];
    int n = fuse_req_getgroups(req, 64, groups);
    for (int i = 0; i < std::min(n, 64) && !in_group; ++i) in_group = groups[i] == a.gid;
    if (in_group) bits = (a.mode >> 3) & 07;
  }
  fuse_reply_err(req, (uint32_t(mask) & ~bits & 07) ? EACCES : 0);
}

}  // namespace strata::fuse
