// Filesystem: asynchronous metadata (docs/FILESYSTEM.md, "Asynchronous
// metadata"). While this client holds dirWrite on a directory, nobody else
// sees its entries or the inodes inline in them: the MDS revokes the lease
// first, and the revoke waits until everything submitted here is safe
// (revoke.cpp). So a create, mkdir, symlink, unlink, rename or setattr in
// it can be decided from the cache, answered at once and sent later in a
// Batch, with inode numbers the MDS delegated to this session.
//
// The client decides only what it can decide exactly as the MDS would;
// anything else (an error to name, sticky directories, hard links, open
// files, a lease about to run out) goes the synchronous way. A change the
// MDS still refuses is logged, the cache is dropped, and the next fsync
// reports EIO.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "filesystem.h"
#include "proto_convert.h"

namespace strata::fuse {

namespace {

// A lease must have this much left for a change to rely on it: the batch
// reaches the MDS long before (batch_delay_us), this covers a slow MDS.
constexpr int64_t kAsyncSpareMs = 3000;

kj::ArrayPtr<const kj::byte> bytes_of(const char *s) {
  return kj::arrayPtr(reinterpret_cast<const kj::byte *>(s), std::strlen(s));
}

}  // namespace

bool Filesystem::Caller::in_group(uint32_t g) const {
  if (g == gid) return true;
  for (uint32_t x : groups)
    if (x == g) return true;
  return false;
}

Filesystem::Caller Filesystem::caller_of(fuse_req_t req) {
  Caller c;
  if (!req) return c;
  const fuse_ctx *ctx = fuse_req_ctx(req);
  c.uid = ctx->uid;
  c.gid = ctx->gid;
  c.pid = uint32_t(ctx->pid);
  c.umask = ctx->umask;
  // Supplementary groups cost a read of /proc/PID/task/TID/status (the
  // kernel formats the whole file: in an untar as root this was most of
  // the client's own CPU, five times per file). No permission decision of
  // root's depends on its groups, here or at the MDS.
  if (c.uid == 0) return c;
  gid_t groups[64];
  int n = fuse_req_getgroups(req, 64, groups);
  for (int i = 0; i < std::min(n, 64); ++i) c.groups.push_back(groups[i]);
  return c;
}

void Filesystem::fill_caller(const Caller &c, fsproto::Request::Builder r) {
  auto b = r.initCaller();
  b.setUid(c.uid);
  b.setGid(c.gid);
  b.setPid(c.pid);
  if (!c.groups.empty()) {
    auto g = b.initGroups(uint32_t(c.groups.size()));
    for (uint32_t i = 0; i < c.groups.size(); ++i) g.set(i, c.groups[i]);
  }
}

bool Filesystem::may(const InodeAttr &a, const Caller &c, uint32_t bits) {
  if (c.uid == 0) return true;
  uint32_t have = c.uid == a.uid      ? (a.mode >> 6) & 7
                  : c.in_group(a.gid) ? (a.mode >> 3) & 7
                                      : a.mode & 7;
  return (have & bits) == bits;
}

bool Filesystem::denied(fuse_req_t req, const InodeAttr &a, uint32_t rwx_bits) {
  return !settings_.default_permissions && !may(a, caller_of(req), rwx_bits);
}

bool Filesystem::async_dir(uint64_t dir, InodeAttr *dir_attr) {
  if (!settings_.async_metadata) return false;
  int64_t now = now_ms();
  auto lease = cache_.dir_lease(dir, now);
  // The listing need not be complete: each change checks that the cache
  // knows the names it decides on (LeaseCache::lookup: present or absent).
  if (!lease || lease->first.kind != uint32_t(fsproto::LeaseKind::DIR_WRITE) ||
      lease->first.expires_ms - now < kAsyncSpareMs)
    return false;
  auto attr = cache_.inode(dir, now);
  if (!attr || attr->first.type != FileType::kDirectory) return false;
  *dir_attr = attr->first;
  return true;
}

uint64_t Filesystem::submit(const Caller &c, const Time &stamp,
                            const std::function<void(fsproto::Request::Builder)> &fill,
                            bool new_name_free) {
  return mds_.submit(
      [&](fsproto::Request::Builder r) {
        fill_caller(c, r);
        fill_time(r.initTime(), stamp);
        fill(r);
      },
      new_name_free);
}

void Filesystem::touch_dir(InodeAttr dir, int nlink_delta, const Time &stamp) {
  dir.mtime = dir.ctime = stamp;
  dir.nlink = uint32_t(int64_t(dir.nlink) + nlink_delta);
  ++dir.version;
  cache_.update_inode(dir);
}

bool Filesystem::async_make(fuse_req_t req, uint64_t dir, const char *name, FileType type,
                            mode_t mode, dev_t rdev, const char *symlink_target, InodeAttr *out,
                            uint64_t *create_tid) {
  if (type != FileType::kRegular && type != FileType::kDirectory && type != FileType::kSymlink)
    return false;
  // Without the filesystem's data pool the MDS has to say where data goes.
  if (data_pool_ < 0) return false;
  // A full cluster: the MDS says ENOSPC, and the caller must hear it.
  if (mds_.cluster_full()) return false;
  InodeAttr parent;
  if (!async_dir(dir, &parent)) return false;
  size_t len = std::strlen(name);
  if (len == 0 || len > 255 || std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
    return false;
  if (cache_.lookup(dir, name, now_ms()).found != LeaseCache::Found::kNegative) return false;
  Caller c = caller_of(req);
  if (!may(parent, c, 3)) return false;
  uint64_t ino = 0;
  if (!mds_.take_ino(&ino)) return false;

  // The inode exactly as the MDS will make it (mds_requests.cpp, CREATE).
  InodeAttr a;
  a.ino = ino;
  a.type = type;
  uint32_t asked = type == FileType::kSymlink ? 0777 : (mode & 07777);
  a.mode = asked & ~c.umask & 07777;
  a.uid = c.uid;
  a.gid = (parent.mode & 02000) ? parent.gid : c.gid;
  if (type == FileType::kDirectory && (parent.mode & 02000)) a.mode |= 02000;
  a.nlink = type == FileType::kDirectory ? 2 : 1;
  const Time stamp = time_now();
  a.atime = a.mtime = a.ctime = a.btime = stamp;
  a.rdev = uint32_t(rdev);
  if (symlink_target) {
    a.symlink_target = symlink_target;
    a.size = a.symlink_target.size();
  }
  a.object_size = 4u << 20;
  a.data_pool = data_pool_;
  a.version = 1;
  const bool start_inline = type == FileType::kRegular && inline_max_ > 0;
  if (start_inline) a.inline_data = std::make_shared<const std::string>();

  uint64_t tid = submit(c, stamp, [&](fsproto::Request::Builder r) {
    auto q = r.initCreate();
    q.setParent(dir);
    q.setName(bytes_of(name));
    q.setType(fsproto::FileType(uint16_t(type)));
    q.setMode(asked);
    q.setRdev(uint32_t(rdev));
    if (symlink_target) q.setSymlinkTarget(symlink_target);
    q.setExclusive(true);
    q.setIno(ino);
    q.setUmask(c.umask);
    if (type == FileType::kRegular) q.setWantLease(fsproto::LeaseKind::FILE_WRITE);
    q.setDataInline(start_inline);
  });
  if (create_tid) *create_tid = tid;
  cache_.created(dir, name, DirEntry{ino, type});
  cache_.put_inode(a, LeaseGrant{}, dir);
  if (type == FileType::kDirectory) {
    // Empty and ours: the MDS grants dirWrite (complete) with the create;
    // its seq comes with the reply (absorb_async).
    auto lease = cache_.dir_lease(dir, now_ms());
    cache_.put_dir_lease(ino,
                         LeaseGrant{uint32_t(fsproto::LeaseKind::DIR_WRITE), 0,
                                    lease ? lease->first.expires_ms : now_ms()},
                         true);
    cache_.mark_new(ino);
  }
  touch_dir(parent, type == FileType::kDirectory ? 1 : 0, stamp);
  *out = a;
  return true;
}

// Without this, an unlinked file this client still holds a lease on (it
// wrote or read it a moment ago: an rm -rf after a tar x) waits in the
// MDS's stray directory until the lease runs out, and only then are its
// data objects removed.
bool Filesystem::give_up_file_lease(uint64_t ino) {
  FileLayout layout;
  layout.ino = ino;
  {
    std::lock_guard<std::mutex> r(report_mu_);
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it != open_.end()) {
      if (it->second.openers > 0 || it->second.dirty) return false;
      layout = it->second.layout;
    }
  }
  // Anything still being written out must land before the MDS removes the
  // objects (it would bring one back), also when the kernel forgot the
  // inode (its OpenFile went) while its close's write-out still runs.
  // Usually nothing is left: at once.
  if (data_ && data_->flush(layout) < 0) return false;
  std::lock_guard<std::mutex> l(open_mu_);
  auto it = open_.find(ino);
  if (it == open_.end()) return true;
  if (it->second.openers > 0 || it->second.dirty) return false;  // opened again meanwhile
  open_.erase(it);
  return true;
}

bool Filesystem::async_unlink(fuse_req_t req, uint64_t dir, const char *name, bool directory) {
  InodeAttr parent;
  if (!async_dir(dir, &parent)) return false;
  int64_t now = now_ms();
  auto hit = cache_.lookup(dir, name, now);
  if (hit.found != LeaseCache::Found::kEntry) return false;
  auto victim = cache_.inode(hit.entry.ino, now);
  if (!victim) return false;
  const InodeAttr &v = victim->first;
  bool is_dir = v.type == FileType::kDirectory;
  if (is_dir != directory) return false;     // EISDIR/ENOTDIR: the MDS names them
  if (!is_dir && v.nlink > 1) return false;  // a hard link: the inode table
  if (is_dir) {
    auto listing = cache_.list(v.ino, now);
    if (!listing || !listing->empty()) return false;  // ENOTEMPTY, or unknown
  }
  Caller c = caller_of(req);
  if (!may(parent, c, 3)) return false;
  if ((parent.mode & 01000) && c.uid != 0 && c.uid != parent.uid && c.uid != v.uid) return false;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(v.ino);
    if (it != open_.end() && it->second.openers > 0) return false;  // purged on close
  }
  const bool closed = !is_dir && give_up_file_lease(v.ino);
  const Time stamp = time_now();
  submit(c, stamp, [&](fsproto::Request::Builder r) {
    auto u = r.initUnlink();
    u.setParent(dir);
    u.setName(bytes_of(name));
    u.setDirectory(directory);
    u.setClosed(closed);
  });
  cache_.removed(dir, name);
  if (is_dir) {
    cache_.drop(v.ino);
  } else {
    // The kernel still sends the times of the inode it holds (writeback
    // cache): an unlinked inode's setattr is answered here (async_setattr).
    InodeAttr gone = v;
    gone.nlink = 0;
    gone.ctime = stamp;
    cache_.update_inode(gone);
  }
  touch_dir(parent, is_dir ? -1 : 0, stamp);
  return true;
}

// Within one directory, or (a file, not a directory: no ".." or subtree to
// check) from one directory to another, both held under dirWrite.
// RENAME_NOREPLACE (what mv(1) asks for when the target is missing) only
// onto a name known missing; RENAME_EXCHANGE goes to the MDS.
bool Filesystem::async_rename(fuse_req_t req, uint64_t dir, const char *name, uint64_t new_dir,
                              const char *newname, unsigned int flags) {
  if (flags & ~unsigned(RENAME_NOREPLACE)) return false;
  InodeAttr parent, new_parent;
  if (!async_dir(dir, &parent)) return false;
  const bool same_dir = dir == new_dir;
  if (same_dir)
    new_parent = parent;
  else if (!async_dir(new_dir, &new_parent))
    return false;
  size_t len = std::strlen(newname);
  if (len == 0 || len > 255 || std::strcmp(newname, ".") == 0 || std::strcmp(newname, "..") == 0)
    return false;
  int64_t now = now_ms();
  auto from = cache_.lookup(dir, name, now);
  if (from.found != LeaseCache::Found::kEntry) return false;
  auto moving = cache_.inode(from.entry.ino, now);
  if (!moving) return false;
  // Across directories only a file inline in its dentry (a hard link's
  // inode lives in the inode table; a directory changes "..").
  if (!same_dir && (moving->first.type == FileType::kDirectory || moving->first.nlink > 1))
    return false;
  auto to = cache_.lookup(new_dir, newname, now);
  if (to.found == LeaseCache::Found::kMiss) return false;
  if ((flags & RENAME_NOREPLACE) && to.found != LeaseCache::Found::kNegative) return false;
  std::optional<InodeAttr> replaced;
  if (to.found == LeaseCache::Found::kEntry) {
    if (to.entry.ino == from.entry.ino) return false;  // two links of one inode
    auto r = cache_.inode(to.entry.ino, now);
    if (!r || r->first.type == FileType::kDirectory || moving->first.type == FileType::kDirectory ||
        r->first.nlink > 1)
      return false;
    replaced = r->first;
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(replaced->ino);
    if (it != open_.end() && it->second.openers > 0) return false;
  }
  Caller c = caller_of(req);
  if (!may(parent, c, 3) || !may(new_parent, c, 3)) return false;
  // Sticky directories: the MDS names the refusal.
  if ((parent.mode & 01000) && c.uid != 0 && c.uid != parent.uid) return false;
  if (!same_dir && (new_parent.mode & 01000) && c.uid != 0 && c.uid != new_parent.uid) return false;
  const Time stamp = time_now();
  // A file renamed within its directory to a free name right after its
  // create (rsync's temporary file) may be made under the new name.
  const bool name_free = same_dir && to.found == LeaseCache::Found::kNegative;
  submit(
      c, stamp,
      [&](fsproto::Request::Builder r) {
        auto n = r.initRename();
        n.setParent(dir);
        n.setName(bytes_of(name));
        n.setNewParent(new_dir);
        n.setNewName(bytes_of(newname));
        n.setFlags(flags);
      },
      name_free);
  cache_.renamed(dir, name, new_dir, newname, flags);
  if (replaced) cache_.drop(replaced->ino);
  InodeAttr m = moving->first;
  m.ctime = stamp;
  ++m.version;
  if (same_dir)
    cache_.update_inode(m);
  else
    cache_.put_inode(m, LeaseGrant{}, new_dir);  // inline in its new directory now
  touch_dir(parent, 0, stamp);
  if (!same_dir) touch_dir(new_parent, 0, stamp);
  return true;
}

bool Filesystem::async_setattr(fuse_req_t req, uint64_t ino, const struct stat *attr, int to_set,
                               InodeAttr *out) {
  if (to_set & FUSE_SET_ATTR_SIZE) return false;  // data first: the synchronous way
  if (!settings_.async_metadata) return false;
  auto cur = cache_.inode(ino, now_ms());
  if (!cur) return false;
  InodeAttr a = cur->first;
  if (a.nlink == 0 && a.type != FileType::kDirectory) {
    // Unlinked here and closed (async_unlink refuses open files): nobody
    // can see it again, the MDS no longer has it.
    bool open = false;
    {
      std::lock_guard<std::mutex> l(open_mu_);
      auto it = open_.find(ino);
      open = it != open_.end() && it->second.openers > 0;
    }
    if (!open) {
      if (to_set & FUSE_SET_ATTR_MTIME)
        a.mtime = Time{attr->st_mtim.tv_sec, uint32_t(attr->st_mtim.tv_nsec)};
      if (to_set & FUSE_SET_ATTR_CTIME)
        a.ctime = Time{attr->st_ctim.tv_sec, uint32_t(attr->st_ctim.tv_nsec)};
      cache_.update_inode(a);
      *out = a;
      return true;
    }
  }
  // Inline in a directory we hold dirWrite on: nobody else sees it.
  uint64_t dir = cache_.parent_of(ino);
  InodeAttr parent;
  if (dir == 0 || !async_dir(dir, &parent)) return false;
  if (a.type != FileType::kDirectory && a.nlink > 1) return false;  // the inode table
  Caller c = caller_of(req);
  bool owner = c.uid == 0 || c.uid == a.uid;
  bool is_dir = a.type == FileType::kDirectory;
  // The MDS's rules (mds_requests.cpp, SETATTR): where it would refuse,
  // let it say so.
  if ((to_set & FUSE_SET_ATTR_MODE) && !owner) return false;
  if ((to_set & FUSE_SET_ATTR_UID) && c.uid != 0 && attr->st_uid != a.uid) return false;
  if ((to_set & FUSE_SET_ATTR_GID) && c.uid != 0 && (c.uid != a.uid || !c.in_group(attr->st_gid)))
    return false;
  // Times go to the MDS as values, which only the owner may set (a
  // writer's "now" is checked by the MDS).
  if ((to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                 FUSE_SET_ATTR_MTIME_NOW)) &&
      !owner)
    return false;

  Time now = time_now();
  uint32_t mask = 0;
  // The MDS's order (mds_requests.cpp, SETATTR): owner (a chown drops
  // set-id bits), then mode, then the set-id kill of a write or truncate.
  if ((to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) && !is_dir)
    a.mode = without_set_ids(a.mode);
  if (to_set & FUSE_SET_ATTR_UID) mask |= fsproto::SetAttr::MASK_UID, a.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) mask |= fsproto::SetAttr::MASK_GID, a.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_MODE) {
    mask |= fsproto::SetAttr::MASK_MODE;
    a.mode = attr->st_mode & 07777;
    if (c.uid != 0 && !c.in_group(a.gid)) a.mode &= ~02000u;
  }
  if ((to_set & kSetAttrKillSuidgid) && !is_dir) {
    mask |= fsproto::SetAttr::MASK_KILL_SUIDGID;
    a.mode = c.uid != 0 && !c.in_group(a.gid) ? a.mode & ~06000u : without_set_ids(a.mode);
  }
  Time atime{attr->st_atim.tv_sec, uint32_t(attr->st_atim.tv_nsec)};
  Time mtime{attr->st_mtim.tv_sec, uint32_t(attr->st_mtim.tv_nsec)};
  Time ctime{attr->st_ctim.tv_sec, uint32_t(attr->st_ctim.tv_nsec)};
  if (to_set & FUSE_SET_ATTR_ATIME_NOW)
    mask |= fsproto::SetAttr::MASK_ATIME, a.atime = atime = now;
  else if (to_set & FUSE_SET_ATTR_ATIME)
    mask |= fsproto::SetAttr::MASK_ATIME, a.atime = atime;
  if (to_set & FUSE_SET_ATTR_MTIME_NOW)
    mask |= fsproto::SetAttr::MASK_MTIME, a.mtime = mtime = now;
  else if (to_set & FUSE_SET_ATTR_MTIME)
    mask |= fsproto::SetAttr::MASK_MTIME, a.mtime = mtime;
  // The times go as values (not "now"): the MDS must end with what the
  // application was told.
  if (!(to_set & FUSE_SET_ATTR_CTIME)) ctime = now;
  mask |= fsproto::SetAttr::MASK_CTIME;
  a.ctime = ctime;
  ++a.version;

  submit(c, now, [&](fsproto::Request::Builder r) {
    auto s = r.initSetattr();
    s.setIno(ino);
    auto b = s.initAttr();
    b.setMode(a.mode);
    b.setUid(a.uid);
    b.setGid(a.gid);
    fill_time(b.initAtime(), a.atime);
    fill_time(b.initMtime(), a.mtime);
    fill_time(b.initCtime(), a.ctime);
    b.setMask(mask);
  });
  cache_.update_inode(a);
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it != open_.end() && (mask & fsproto::SetAttr::MASK_MTIME)) it->second.mtime = a.mtime;
    if (it != open_.end()) it->second.ctime = a.ctime;
  }
  *out = a;
  return true;
}

// Under fileWrite the size is ours to change, as a write's is (an
// O_TRUNC open of a file this client holds, a truncate(2) of one it has
// open): the data is cut now, the size goes with the next report.
bool Filesystem::truncate_locally(fuse_req_t req, uint64_t ino, const struct stat *attr, int to_set,
                                  InodeAttr *out) {
  constexpr int kLocal = FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW |
                         FUSE_SET_ATTR_CTIME | kSetAttrKillSuidgid;
  if (!settings_.async_metadata || !data_ || (to_set & ~kLocal) || attr->st_size < 0) return false;
  const uint64_t new_size = uint64_t(attr->st_size);
  if (max_file_size_ != 0 && new_size > max_file_size_) return false;  // EFBIG: the MDS's
  auto cached = cache_.inode(ino, now_ms());
  if (!cached || cached->first.type != FileType::kRegular) return false;
  const InodeAttr &c = cached->first;
  // Set-id bits to drop, or a permission to refuse: the MDS's part.
  if ((to_set & kSetAttrKillSuidgid) && (c.mode & 06000)) return false;
  if (denied(req, c, 2)) return false;
  FileLayout layout;
  uint64_t old_size = 0;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end() || it->second.lease_kind != uint32_t(fsproto::LeaseKind::FILE_WRITE) ||
        it->second.lease_expires_ms - now_ms() < kAsyncSpareMs)
      return false;
    layout = it->second.layout;
    old_size = it->second.size;
  }
  // The kernel holds back writes to the file while its truncate runs.
  if (data_->truncate(layout, old_size, new_size) < 0) return false;  // the MDS's way names it
  const Time now = time_now();
  const Time mtime = (to_set & FUSE_SET_ATTR_MTIME)
                         ? Time{attr->st_mtim.tv_sec, uint32_t(attr->st_mtim.tv_nsec)}
                         : now;
  const Time ctime = (to_set & FUSE_SET_ATTR_CTIME)
                         ? Time{attr->st_ctim.tv_sec, uint32_t(attr->st_ctim.tv_nsec)}
                         : now;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end()) return false;  // forgotten meanwhile: the MDS's way
    it->second.size = new_size;
    it->second.mtime = mtime;
    it->second.ctime = ctime;
    it->second.dirty = true;
  }
  counters_.local_truncate();
  *out = c;
  out->size = new_size;
  out->mtime = mtime;
  out->ctime = ctime;
  return true;
}

// With the writeback cache the kernel keeps a file's mtime and ctime and
// sends them in a setattr of their own after writes (at close), after a
// rename and after an unlink of another link: one MDS request each, two
// per file of an rsync. Under fileWrite they join the size report instead,
// as a write's times do.
bool Filesystem::times_locally(fuse_req_t req, uint64_t ino, const struct stat *attr, int to_set,
                               InodeAttr *out) {
  constexpr int kTimes = FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
  if (!settings_.async_metadata || !closers_ || !(to_set & kTimes) || (to_set & ~kTimes))
    return false;
  auto cached = cache_.inode(ino, now_ms());
  if (!cached || cached->first.type != FileType::kRegular) return false;
  const InodeAttr &c = cached->first;
  // Times as values are the owner's to set (the MDS's rule; a writer's
  // "now" is the MDS's to check).
  const Caller who = caller_of(req);
  if (who.uid != 0 && who.uid != c.uid) return false;
  const Time now = time_now();
  FileLayout layout;
  bool closed = false;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end() || it->second.lease_kind != uint32_t(fsproto::LeaseKind::FILE_WRITE) ||
        it->second.lease_expires_ms - now_ms() < kAsyncSpareMs)
      return false;
    OpenFile &f = it->second;
    if (to_set & FUSE_SET_ATTR_MTIME_NOW)
      f.mtime = now;
    else if (to_set & FUSE_SET_ATTR_MTIME)
      f.mtime = Time{attr->st_mtim.tv_sec, uint32_t(attr->st_mtim.tv_nsec)};
    f.ctime = (to_set & FUSE_SET_ATTR_CTIME)
                  ? Time{attr->st_ctim.tv_sec, uint32_t(attr->st_ctim.tv_nsec)}
                  : now;
    f.dirty = true;
    layout = f.layout;
    closed = f.openers == 0;
  }
  // Nobody's close will write it out: a deferred write-out reports it,
  // or the file's create while that is unsent (the ctime of an rsync's
  // rename right after the close: one MDS request fewer per file), after
  // which the file's buffers go as at a last release.
  if (closed && (!report_with_create(ino) || !data_ || !data_->forget_if_idle(ino)))
    closers_->post(
        ino, [this, ino, layout] { write_back_closed(ino, layout); }, true);
  counters_.local_times();
  *out = c;
  return true;
}

bool Filesystem::async_report_size(uint64_t ino) {
  if (!settings_.async_metadata) return false;
  // Growing inline data is refused on a full cluster: the synchronous
  // report returns the ENOSPC to whoever flushes.
  if (mds_.cluster_full()) return false;
  uint64_t size = 0;
  Time mtime, ctime;
  FileLayout layout;
  DataReport data;
  // Under fileWrite the size is ours to report whenever: whoever wants it
  // revokes the lease, and the revoke waits for this to be safe. Which
  // blocks are allocated is asked first, outside the locks.
  auto peek = [&](bool *report) {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end() || !it->second.dirty) return true;
    if (it->second.lease_kind != uint32_t(fsproto::LeaseKind::FILE_WRITE)) return false;
    size = it->second.size;
    layout = it->second.layout;
    *report = true;
    return true;
  };
  bool report = false;
  if (!peek(&report)) return false;
  if (!report) return true;
  int64_t blocks = data_ ? data_->allocated_blocks(layout, size) : 0;
  {
    std::lock_guard<std::mutex> r(report_mu_);
    {
      std::lock_guard<std::mutex> l(open_mu_);
      auto it = open_.find(ino);
      if (it == open_.end() || !it->second.dirty) return true;
      if (it->second.lease_kind != uint32_t(fsproto::LeaseKind::FILE_WRITE)) return false;
      if (it->second.size != size) blocks = -1;  // written meanwhile: blocks unknown
      size = it->second.size;
      mtime = it->second.mtime;
      ctime = it->second.ctime;
      it->second.dirty = false;
      data = take_data_report(it->second);
    }
    submit(Caller{}, ctime, [&](fsproto::Request::Builder r) {
      fill_size_report(r, ino, size, mtime, ctime, blocks, data);
    });
  }
  if (auto c = cache_.inode(ino, now_ms())) {
    InodeAttr a = c->first;
    a.size = size;
    a.mtime = mtime;
    a.ctime = ctime;
    if (blocks >= 0) a.blocks = uint64_t(blocks);
    cache_.update_inode(a);
  }
  return true;
}

void Filesystem::absorb_async(fsproto::Reply::Reader r) {
  if (r.getResult() < 0) {
    // The cache said yes, the MDS no: what we hold may be wrong.
    log_(STRATA_LOG_WARN, "an asynchronous change (request " + std::to_string(r.getTid()) +
                              ") was refused by the MDS: " + std::strerror(-r.getResult()) +
                              (r.getMessage().size() ? ": " + std::string(r.getMessage()) : "") +
                              "; the next fsync reports EIO");
    cache_.clear();
    return;
  }
  // The leases the change came with (a file's fileWrite, a new
  // directory's dirWrite) get their seq.
  int64_t now = now_ms();
  for (auto l : r.getLeases()) {
    LeaseGrant g = to_grant(l, r.getNowMs(), now, settings_.lease_margin_ms);
    cache_.adopt(l.getIno(), g);
    if (l.getKind() == fsproto::LeaseKind::FILE_WRITE) {
      std::lock_guard<std::mutex> lk(open_mu_);
      auto it = open_.find(l.getIno());
      if (it != open_.end() && it->second.lease_seq == 0 &&
          it->second.lease_kind == uint32_t(fsproto::LeaseKind::FILE_WRITE)) {
        it->second.lease_seq = g.seq;
        it->second.lease_expires_ms = g.expires_ms;
      }
    }
  }
}

void Filesystem::maintain() {
  int64_t now = now_ms();
  cache_.expire(now);
  int64_t lease = int64_t(mds_lease_ms_);
  auto inos = cache_.renewable(now, now + lease / 2, now - lease);
  // Files in use (open, or opened or closed within a lease) keep their
  // lease too, so that a reopen (a second tar or make over the same tree)
  // needs no MDS round trip; an idle one is left to expire (seed 002).
  // A file with buffered changes keeps fileWrite until they are out.
  {
    std::lock_guard<std::mutex> l(open_mu_);
    for (const auto &[ino, f] : open_) {
      if (f.lease_seq == 0 || f.lease_expires_ms <= now || f.lease_expires_ms > now + lease / 2)
        continue;
      if (f.lease_kind != uint32_t(fsproto::LeaseKind::FILE_READ) &&
          f.lease_kind != uint32_t(fsproto::LeaseKind::FILE_WRITE))
        continue;
      if (f.openers > 0 || f.used_ms >= now - lease || f.dirty) inos.push_back(ino);
    }
  }
  if (inos.empty()) return;
  if (inos.size() > 4096) inos.resize(4096);
  int err = 0;
  int64_t sent = now_ms();
  auto reply = mds_.call(
      [&](fsproto::Request::Builder r) {
        auto l = r.initRenewLeases().initInos(uint32_t(inos.size()));
        for (uint32_t i = 0; i < inos.size(); ++i) l.set(i, inos[i]);
      },
      &err);
  if (!reply || err < 0) return;
  auto r = reply->root<fsproto::Reply>();
  for (auto l : r.getLeases()) {
    LeaseGrant g = to_grant(l, r.getNowMs(), sent, settings_.lease_margin_ms);
    if (l.getKind() != fsproto::LeaseKind::FILE_READ &&
        l.getKind() != fsproto::LeaseKind::FILE_WRITE) {
      cache_.renewed(l.getIno(), g);
      continue;
    }
    // The same grant runs longer; a file whose lease was revoked or
    // replaced meanwhile keeps what it has now.
    std::lock_guard<std::mutex> lk(open_mu_);
    auto it = open_.find(l.getIno());
    if (it != open_.end() && it->second.lease_seq == g.seq && it->second.lease_kind == g.kind)
      it->second.lease_expires_ms = std::max(it->second.lease_expires_ms, g.expires_ms);
  }
}

void Filesystem::await_create(uint64_t ino) {
  uint64_t tid = 0;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end() || it->second.create_tid == 0) return;
    tid = it->second.create_tid;
  }
  if (int err = mds_.wait_safe(tid, mds_lease_ms_); err < 0) {
    log_(STRATA_LOG_WARN, "inode " + std::to_string(ino) +
                              ": writing its data before its create is safe (" +
                              std::strerror(-err) + ")");
    return;
  }
  std::lock_guard<std::mutex> l(open_mu_);
  auto it = open_.find(ino);
  if (it != open_.end() && it->second.create_tid == tid) it->second.create_tid = 0;
}

int Filesystem::settle_async(uint32_t timeout_ms, std::string *why) {
  uint64_t last = mds_.last_submitted();
  if (last == 0) return 0;
  int err = mds_.wait_safe(last, timeout_ms);
  if (err < 0 && why)
    *why = std::string("asynchronous changes are not safe yet: ") + std::strerror(-err);
  return err;
}

}  // namespace strata::fuse
