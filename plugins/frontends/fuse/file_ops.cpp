// Filesystem: open files, their data (FileData) and the size the client
// keeps under a fileWrite lease, fsync, byte-range and flock locks,
// fallocate.
//
// O_APPEND: with the writeback cache the kernel places appends itself
// (libfuse: "the kernel will handle O_APPEND"), which is right only if
// every change of the file comes through this kernel. A writer holds the
// exclusive fileWrite lease, so it does; writes carry the offset the
// kernel chose and O_APPEND is not looked at here.
#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "filesystem.h"
#include "proto_convert.h"

namespace strata::fuse {

namespace {

bool writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY; }

}  // namespace

void Filesystem::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  counters_.count(Op::kOpen);
  uint64_t m = to_mds(ino);
  auto want = writes(fi->flags) ? fsproto::LeaseKind::FILE_WRITE : fsproto::LeaseKind::FILE_READ;
  // The permission bits, checked against attributes the lease keeps true:
  // by the kernel (default_permissions), else here as the MDS would.
  bool permitted = settings_.default_permissions;
  if (!permitted) {
    if (auto c = cache_.inode(m, now_ms())) {
      uint32_t acc = uint32_t(fi->flags) & O_ACCMODE;
      bool wr = acc == O_WRONLY || acc == O_RDWR || (fi->flags & O_TRUNC);
      uint32_t bits = (acc == O_RDONLY || acc == O_RDWR ? 4 : 0) | (wr ? 2 : 0);
      permitted = may(c->first, caller_of(req), bits);
    }
  }
  {
    // Under a lease that covers this open (fileWrite covers any; fileRead
    // a reader's), nobody else changed the file since we last had it: no
    // MDS round trip, and the page cache stays.
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(m);
    if (permitted && it != open_.end() && it->second.version != 0 &&
        (it->second.lease_kind == uint32_t(fsproto::LeaseKind::FILE_WRITE) ||
         (it->second.lease_kind == uint32_t(fsproto::LeaseKind::FILE_READ) &&
          want == fsproto::LeaseKind::FILE_READ)) &&
        it->second.lease_expires_ms - now_ms() > 3000) {
      ++it->second.openers;
      it->second.used_ms = now_ms();
      fi->keep_cache = 1;
      fi->fh = 0;
      counters_.cache_hit();
      if (fuse_reply_open(req, fi) != 0) {
        --it->second.openers;
      }
      return;
    }
  }
  int err = 0;
  auto reply = request(
      req,
      [&](fsproto::Request::Builder r) {
        auto o = r.initOpen();
        o.setIno(m);
        o.setFlags(uint32_t(fi->flags));
        o.setWantLease(want);
      },
      &err);
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  auto r = reply->root<fsproto::Reply>();
  InodeAttr a = to_attr(r.getInode());
  uint32_t granted = 0;
  uint64_t seq = 0;
  for (auto l : r.getLeases())
    if (l.getIno() == m) granted = uint32_t(l.getKind()), seq = l.getSeq();
  {
    std::lock_guard<std::mutex> l(open_mu_);
    OpenFile &f = open_[m];
    // The page cache may stay if the file did not change since we last
    // had it open (a revoke zeroes the version) and a lease, or an open
    // here, keeps it so. Not just for an open here: the kernel sends the
    // RELEASE of a close in the background, so a reopen right after can
    // find openers > 0 while a page read before a revoke was still filled
    // in after it: kept, that page would show the old content under the
    // new size.
    fi->keep_cache = f.version == a.version && (granted != 0 || f.openers > 0);
    // Our buffers may outlive a close (a deferred write-out): what they
    // cached of a file that changed since goes, as the page cache does.
    if (f.version != a.version && data_) data_->invalidate(m);
    ++f.openers;
    f.used_ms = now_ms();
    f.version = a.version;
    // While we have changes not reported, where the data is is ours to say.
    if (!f.dirty && f.data_report == DataReport::kUnchanged) f.layout = layout_of(a);
    if (granted != 0) f.lease_kind = granted, f.lease_seq = seq;
    if (granted != 0)
      f.only_link = granted == uint32_t(fsproto::LeaseKind::FILE_WRITE) && a.nlink == 1;
    for (auto l : r.getLeases())
      if (l.getIno() == m && granted != 0)
        f.lease_expires_ms =
            to_grant(l, r.getNowMs(), now_ms() - 1000, settings_.lease_margin_ms).expires_ms;
    if (!f.dirty) f.size = a.size, f.mtime = a.mtime, f.ctime = a.ctime;
  }
  fi->fh = 0;
  if (fuse_reply_open(req, fi) != 0) release(nullptr, ino);
}

void Filesystem::create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                        fuse_file_info *fi) {
  counters_.count(Op::kCreate);
  if (std::strlen(name) > 255) {
    fuse_reply_err(req, ENAMETOOLONG);
    return;
  }
  uint64_t dir = to_mds(parent);
  uint64_t create_tid = 0;
  if (InodeAttr a;
      async_make(req, dir, name, FileType::kRegular, mode, 0, nullptr, &a, &create_tid)) {
    {
      std::lock_guard<std::mutex> l(open_mu_);
      OpenFile &f = open_[a.ino];
      ++f.openers;
      f.version = a.version;
      f.layout = layout_of(a);
      f.lease_kind = uint32_t(fsproto::LeaseKind::FILE_WRITE);  // seq: absorb_async
      f.create_tid = create_tid;
      // At least as long as the directory's dirWrite, which covers it until then.
      f.lease_expires_ms =
          valid_seconds(a.ino) > 0 ? now_ms() + int64_t(valid_seconds(a.ino) * 1000) : 0;
      f.size = 0, f.mtime = a.mtime, f.ctime = a.ctime;
      f.only_link = true;
    }
    reply_create(req, a, fi);
    return;
  }
  int err = 0;
  auto reply = request(
      req,
      [&](fsproto::Request::Builder r) {
        auto c = r.initCreate();
        c.setParent(dir);
        c.setName(kj::arrayPtr(reinterpret_cast<const kj::byte *>(name), std::strlen(name)));
        c.setType(fsproto::FileType::REGULAR);
        c.setMode(mode & 07777);
        c.setExclusive((fi->flags & O_EXCL) != 0);
        c.setWantLease(fsproto::LeaseKind::FILE_WRITE);
        c.setUmask(fuse_req_ctx(req)->umask);
        c.setDataInline(inline_max_ > 0);
        // Our coarse clock, as an asynchronous create's: the kernel's
        // first write then finds the times it would stamp (inode_attr.h).
        fill_time(r.initTime(), time_now());
      },
      &err);
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  auto r = reply->root<fsproto::Reply>();
  InodeAttr a = to_attr(r.getInode());
  cache_.created(dir, name, DirEntry{a.ino, a.type});
  {
    std::lock_guard<std::mutex> l(open_mu_);
    OpenFile &f = open_[a.ino];
    ++f.openers;
    f.version = a.version;
    f.layout = layout_of(a);
    for (auto l2 : r.getLeases())
      if (l2.getIno() == a.ino) {
        f.lease_kind = uint32_t(l2.getKind()), f.lease_seq = l2.getSeq();
        f.only_link = l2.getKind() == fsproto::LeaseKind::FILE_WRITE && a.nlink == 1;
        f.lease_expires_ms =
            to_grant(l2, r.getNowMs(), now_ms() - 1000, settings_.lease_margin_ms).expires_ms;
      }
    if (!f.dirty) f.size = a.size, f.mtime = a.mtime, f.ctime = a.ctime;
  }
  reply_create(req, a, fi);
}

void Filesystem::reply_create(fuse_req_t req, const InodeAttr &a, fuse_file_info *fi) {
  InodeAttr local = a;
  overlay_local(&local);
  fuse_entry_param e = entry_of(local, valid_seconds(a.ino));
  inodes_.looked_up(a.ino);
  fi->fh = 0;
  if (fuse_reply_create(req, &e, fi) != 0) {
    inodes_.forget(a.ino, 1);
    release(nullptr, e.ino);
  }
}

bool Filesystem::open_file_data(fuse_req_t req, uint64_t m, FileLayout *layout, uint64_t *size) {
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(m);
    if (it == open_.end()) {
      fuse_reply_err(req, EBADF);
      return false;
    }
    *layout = it->second.layout;
    if (size) *size = it->second.size;
  }
  if (!data_) {
    fuse_reply_err(req, EIO);
    return false;
  }
  return true;
}

void Filesystem::read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off) {
  counters_.count(Op::kRead);
  uint64_t m = to_mds(ino);
  FileLayout layout;
  uint64_t file_size = 0;
  if (!open_file_data(req, m, &layout, &file_size)) return;
  std::vector<char> buf(size);
  int64_t n = data_->read(layout, file_size, uint64_t(off), size, buf.data());
  if (n < 0)
    fuse_reply_err(req, int(-n));
  else
    fuse_reply_buf(req, buf.data(), size_t(n));
}

void Filesystem::write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off) {
  counters_.count(Op::kWrite);
  uint64_t m = to_mds(ino);
  const bool kill = take_kill_on_write(ino);
  FileLayout layout;
  if (!open_file_data(req, m, &layout, nullptr)) return;
  if (kill) kill_set_ids(req, m);
  // Past the largest file size: EFBIG before anything is buffered (write(2)
  // writes what fits below the limit first; the kernel retries the rest).
  if (max_file_size_ && uint64_t(off) + size > max_file_size_) {
    if (uint64_t(off) >= max_file_size_) {
      fuse_reply_err(req, EFBIG);
      return;
    }
    size = size_t(max_file_size_ - uint64_t(off));
  }
  int64_t n = data_->write(layout, uint64_t(off), buf, size);
  if (n < 0) {
    // With the writeback cache the kernel turns this into EIO at close:
    // the log is where the reason survives. A full pool is expected.
    if (n != -ENOSPC && n != -EDQUOT && write_failures_.fetch_add(1) < kWriteFailuresLogged)
      log_(STRATA_LOG_WARN,
           "inode " + std::to_string(m) + ": a write of " + std::to_string(size) + " bytes at " +
               std::to_string(off) + " failed: " + std::strerror(int(-n)) + " (pool " +
               std::to_string(layout.pool) + "; the first " + std::to_string(kWriteFailuresLogged) +
               " such failures are logged)");
    fuse_reply_err(req, int(-n));
    return;
  }
  {
    std::lock_guard<std::mutex> l(open_mu_);
    OpenFile &f = open_[m];
    f.size = std::max<uint64_t>(f.size, uint64_t(off) + uint64_t(n));
    // Under the writeback cache a WRITE arrives when the kernel writes its
    // pages back (at close, at fsync), not when the data changed; the
    // kernel keeps the times and sends them in a setattr when it moved
    // them. Without it, a WRITE is the write(2) itself.
    if (!kernel_keeps_times_) f.mtime = f.ctime = time_now();
    f.dirty = true;
  }
  fuse_reply_write(req, size_t(n));
}

void Filesystem::note_kill_on_write(uint64_t fuse_ino) {
  std::lock_guard<std::mutex> l(kill_mu_);
  kill_on_write_.insert(fuse_ino);
}

void Filesystem::note_init_request(uint64_t unique, bool offered) {
  std::lock_guard<std::mutex> l(kill_mu_);
  init_unique_ = unique;
  init_offered_ = offered;
}

bool Filesystem::take_init_reply(uint64_t unique) {
  std::lock_guard<std::mutex> l(kill_mu_);
  if (init_unique_ == 0 || unique != init_unique_) return false;
  init_unique_ = 0;
  if (!init_offered_ || !settings_.killpriv_v2) return false;
  killpriv_on_ = true;
  return true;
}

bool Filesystem::take_kill_on_write(uint64_t fuse_ino) {
  std::lock_guard<std::mutex> l(kill_mu_);
  return kill_on_write_.erase(fuse_ino) > 0;
}

void Filesystem::kill_set_ids(fuse_req_t req, uint64_t ino) {
  // The writer need not own the file: SetAttr.maskKillSuidgid is allowed
  // to anyone who may write it. A failure is logged, not the write's.
  struct stat none;
  std::memset(&none, 0, sizeof none);
  if (InodeAttr a; async_setattr(req, ino, &none, kSetAttrKillSuidgid, &a)) return;
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        auto s = r.initSetattr();
        s.setIno(ino);
        s.initAttr().setMask(fsproto::SetAttr::MASK_KILL_SUIDGID);
      },
      &err);
  if (err < 0)
    log_(STRATA_LOG_WARN,
         "inode " + std::to_string(ino) +
             ": clearing its set-id bits before a write failed: " + std::strerror(-err));
}

size_t Filesystem::settle_inline(uint64_t ino, uint64_t budget) {
  if (!data_) return 0;
  std::lock_guard<std::mutex> l(open_mu_);
  auto it = open_.find(ino);
  if (it == open_.end()) return 0;
  OpenFile &f = it->second;
  std::string bytes;
  size_t taken = 0;
  switch (data_->settle_inline(f.layout, f.size, std::min<uint64_t>(inline_max_, budget), &bytes)) {
    case InlineOutcome::kUnchanged:
      return 0;
    case InlineOutcome::kInline:
      taken = bytes.size();
      f.layout.inline_data = std::make_shared<const std::string>(std::move(bytes));
      f.data_report = DataReport::kInline;
      break;
    case InlineOutcome::kObjects:
      f.layout.inline_data.reset();
      f.data_report = DataReport::kObjects;
      break;
  }
  f.dirty = true;
  return taken;
}

DataReport Filesystem::take_data_report(OpenFile &f) {
  DataReport d;
  d.where = f.data_report;
  if (d.where == DataReport::kInline) d.bytes = f.layout.inline_data;
  f.data_report = DataReport::kUnchanged;
  return d;
}

void Filesystem::restore_report(uint64_t ino, const DataReport &d) {
  if (d.where == DataReport::kUnchanged) return;
  std::lock_guard<std::mutex> l(open_mu_);
  auto it = open_.find(ino);
  if (it == open_.end() || it->second.data_report != DataReport::kUnchanged) return;
  it->second.data_report = d.where;
  it->second.dirty = true;
}

int Filesystem::report_size(fuse_req_t req, uint64_t ino) {
  uint64_t size = 0;
  Time mtime, ctime;
  FileLayout layout;
  DataReport data;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end() || !it->second.dirty) return 0;
    size = it->second.size;
    mtime = it->second.mtime;
    ctime = it->second.ctime;
    layout = it->second.layout;
    data = take_data_report(it->second);
  }
  int64_t blocks = data_ ? data_->allocated_blocks(layout, size) : 0;
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        fill_size_report(r, ino, size, mtime, ctime, blocks, data);
      },
      &err);
  if (err < 0) restore_report(ino, data);
  if (err == 0) {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    // Still the same size: nothing written meanwhile.
    if (it != open_.end() && it->second.size == size) it->second.dirty = false;
  }
  return err;
}

void Filesystem::flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  counters_.count(Op::kFlush);
  uint64_t m = to_mds(ino);
  // POSIX locks belong to the process and go on any close of the file
  // (the kernel keeps no local record of them: the FUSE server must).
  if (fi && posix_locker(m, fi->lock_owner, true))
    lock_request(nullptr, m, uint32_t(fsproto::LockKind::POSIX),
                 uint32_t(fsproto::LockType::UNLOCK), 0, 0, fi->lock_owner, 0, false);
  FileLayout layout;
  bool dirty = false;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(m);
    if (it == open_.end()) {
      fuse_reply_err(req, 0);
      return;
    }
    layout = it->second.layout;
    dirty = it->second.dirty;
  }
  // Under fileWrite the write-out may follow close(2): another client's
  // open revokes the lease and the revoke writes everything out first
  // (close-to-open). Without the lease (or with sync_close), close reports
  // write-out errors itself. Changed data waits writeback_delay_ms.
  if (closers_ && holds_file_write(m)) {
    if (dirty && report_with_create(m)) {
      fuse_reply_err(req, 0);
      return;
    }
    // Nothing changed and nothing queued: nothing to write out (a worker
    // woken for it cost a context switch per close of a tar c).
    if (dirty || closers_->has_jobs(m))
      closers_->post(
          m, [this, m, layout] { write_back(m, layout); }, dirty);
    fuse_reply_err(req, 0);
    return;
  }
  await_create(m);
  settle_inline(m);
  int err = data_ ? data_->flush(layout) : 0;
  if (err == 0 && !async_report_size(m)) err = report_size(req, m);
  fuse_reply_err(req, -err);
}

bool Filesystem::report_with_create(uint64_t ino) {
  uint64_t tid = 0;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end()) return false;
    const OpenFile &f = it->second;
    if (!f.layout.inline_data || f.size > inline_max_ || f.create_tid == 0) return false;
    tid = f.create_tid;
  }
  // A write-out queued before must go first; a create already sent leaves
  // the bytes to the usual write-out (they may never need to go).
  if (closers_->has_jobs(ino) || !mds_.create_unsent(tid)) return false;
  settle_inline(ino);
  return async_report_size(ino);
}

void Filesystem::settle_victim(uint64_t dir, const char *name) {
  if (!closers_ || closers_->pending() == 0) return;
  auto hit = cache_.lookup(dir, name, now_ms());
  if (hit.found != LeaseCache::Found::kEntry) return;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    if (!open_.count(hit.entry.ino)) return;
  }
  if (drop_unwritten(hit.entry.ino)) {
    dropped_writebacks_++;
    return;
  }
  // Only the victim's own write-out (its objects must not be written after
  // its unlink): an untar's end, where tar replaces its symlink
  // placeholders, does not wait for the whole backlog.
  closers_->settle(hit.entry.ino);
}

bool Filesystem::drop_unwritten(uint64_t ino) {
  // As a local filesystem never writes the dirty pages of a file deleted
  // first: an rm -rf right after an untar costs no data write at all. Only
  // for a file nobody has open, whose only link this is, under our
  // fileWrite (nobody else saw its data or could link it), none of whose
  // objects we wrote since the MDS last learnt its size (the purge must
  // find them all), and with no failed write-out pending (its objects are
  // in doubt).
  {
    std::lock_guard<std::mutex> l(data_error_mu_);
    if (data_error_ != 0) return false;
  }
  const int64_t now = now_ms();
  return closers_->cancel(ino, [&] {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it == open_.end()) return false;
    OpenFile &f = it->second;
    if (!f.only_link || f.openers > 0 || f.lease_kind != uint32_t(fsproto::LeaseKind::FILE_WRITE) ||
        f.lease_expires_ms <= now)
      return false;
    if (!data_->discard(ino)) return false;
    f.dirty = false;
    f.data_report = DataReport::kUnchanged;
    return true;
  });
}

bool Filesystem::holds_file_write(uint64_t ino) const {
  std::lock_guard<std::mutex> l(open_mu_);
  auto it = open_.find(ino);
  return it != open_.end() && it->second.lease_kind == uint32_t(fsproto::LeaseKind::FILE_WRITE);
}

int Filesystem::write_back(uint64_t ino, const FileLayout &layout) {
  await_create(ino);
  settle_inline(ino);
  int err = data_ ? data_->flush(layout) : 0;
  if (err == -ENOSPC) mds_.note_cluster_full();
  if (err < 0) {
    log_(STRATA_LOG_WARN, "inode " + std::to_string(ino) +
                              ": writing a closed file's data out failed: " + std::strerror(-err) +
                              " (the next fsync reports it)");
    std::lock_guard<std::mutex> l(data_error_mu_);
    if (data_error_ == 0) {
      data_error_ = err;
      data_error_what_ = "inode " + std::to_string(ino);
    }
    return err;
  }
  if (!async_report_size(ino)) err = report_size(nullptr, ino);
  return err;
}

void Filesystem::write_back_closed(uint64_t ino, const FileLayout &layout) {
  write_back(ino, layout);
  if (!data_) return;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(ino);
    if (it != open_.end() && it->second.openers > 0) return;  // opened again
  }
  data_->forget(ino);
}

void Filesystem::release(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  if (req) counters_.count(Op::kRelease);
  uint64_t m = to_mds(ino);
  // flock locks belong to the open file description, which goes now.
  if (fi && fi->flock_release)
    lock_request(nullptr, m, uint32_t(fsproto::LockKind::FLOCK),
                 uint32_t(fsproto::LockType::UNLOCK), 0, 0, fi->lock_owner, 0, false);
  bool last = false, dirty = false;
  FileLayout layout;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    auto it = open_.find(m);
    if (it != open_.end() && it->second.openers > 0) last = --it->second.openers == 0;
    if (it != open_.end()) {
      layout = it->second.layout;
      it->second.used_ms = now_ms();
      dirty = it->second.dirty;
    }
  }
  if (last && data_) {
    // Buffers go; the lease stays until revoked or expired (a reopen is
    // then free).
    auto done = [this, m, layout] { write_back_closed(m, layout); };
    // Deferred only with changes to write (a reader's buffers, its
    // read-ahead, go at once: here, when that needs no wait and nothing of
    // the file is queued, else through a worker).
    if (!closers_)
      done();
    else if (dirty || closers_->has_jobs(m) || !data_->forget_if_idle(m))
      closers_->post(m, done, dirty);
  }
  if (req) fuse_reply_err(req, 0);
}

void Filesystem::fsync(fuse_req_t req, fuse_ino_t ino, bool directory) {
  counters_.count(directory ? Op::kFsyncdir : Op::kFsync);
  uint64_t m = to_mds(ino);
  int err = 0;
  if (!directory) {
    FileLayout layout;
    bool open = false;
    {
      std::lock_guard<std::mutex> l(open_mu_);
      auto it = open_.find(m);
      if (it != open_.end()) open = true, layout = it->second.layout;
    }
    if (open) await_create(m), settle_inline(m);
    if (open && data_) err = data_->flush(layout);
    // The OSDs refused data for want of space: decide nothing that takes
    // space here until the MDS says otherwise (its map may lag theirs).
    if (err == -ENOSPC) mds_.note_cluster_full();
    if (err == 0) err = report_size(req, m);
  }
  // The Fsync follows every change submitted before it (the MDS runs a
  // session's messages in order) and waits until they are safe.
  if (err == 0)
    request(
        req, [&](fsproto::Request::Builder r) { r.initFsync().setIno(m); }, &err);
  std::string why;
  // A refused asynchronous change: ENOSPC as itself (a full cluster: it
  // explains whatever failed after it), anything else as the I/O error it
  // is to this caller.
  if (int e = mds_.take_async_error(&why); e < 0) {
    if (e == -ENOSPC)
      err = e;
    else if (err == 0)
      err = -EIO;
  }
  if (err == 0) {
    std::lock_guard<std::mutex> l(data_error_mu_);
    if (data_error_ != 0) err = data_error_, data_error_ = 0;
  }
  fuse_reply_err(req, -err);
}

int Filesystem::lock_request(fuse_req_t req, uint64_t ino, uint32_t kind, uint32_t type,
                             uint64_t start, uint64_t length, uint64_t owner, uint32_t pid,
                             bool wait) {
  int err = 0;
  request(
      req,
      [&](fsproto::Request::Builder r) {
        auto s = r.initSetlock();
        s.setIno(ino);
        s.setWait(wait);
        auto l = s.initLock();
        l.setKind(fsproto::LockKind(uint16_t(kind)));
        l.setType(fsproto::LockType(uint16_t(type)));
        l.setStart(start);
        l.setLength(length);
        l.setOwner(owner);
        l.setPid(pid);
      },
      &err);
  // A waiting lock the MDS queued has no reply until it is granted: the
  // MDS then sends LockGranted and this request's Reply (result 0). The
  // worker waits in call() meanwhile (the loop is multi-threaded, so
  // others go on, among them the unlock that lets it through).
  return err;
}

bool Filesystem::posix_locker(uint64_t ino, uint64_t owner, bool forget) {
  std::lock_guard<std::mutex> l(lock_mu_);
  auto key = std::make_pair(ino, owner);
  if (!forget) return !posix_lockers_.insert(key).second;
  return posix_lockers_.erase(key) > 0;
}

void Filesystem::handle_lock_granted(fsproto::LockGranted::Reader) {
  // The Reply to the waiting SetLock, which follows, is what wakes it.
}

namespace {
uint32_t lock_type(short t) {
  return t == F_RDLCK   ? uint32_t(fsproto::LockType::READ)
         : t == F_WRLCK ? uint32_t(fsproto::LockType::WRITE)
                        : uint32_t(fsproto::LockType::UNLOCK);
}
}  // namespace

void Filesystem::getlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, struct flock *lock) {
  counters_.count(Op::kGetlk);
  int err = 0;
  auto reply = request(
      req,
      [&](fsproto::Request::Builder r) {
        auto g = r.initGetlock();
        g.setIno(to_mds(ino));
        auto l = g.initLock();
        l.setKind(fsproto::LockKind::POSIX);
        l.setType(fsproto::LockType(uint16_t(lock_type(lock->l_type))));
        l.setStart(uint64_t(lock->l_start));
        l.setLength(uint64_t(lock->l_len));
        l.setOwner(fi->lock_owner);
        l.setPid(uint32_t(lock->l_pid));
      },
      &err);
  if (err < 0) {
    fuse_reply_err(req, -err);
    return;
  }
  auto c = reply->root<fsproto::Reply>().getLock();
  struct flock out = *lock;
  switch (c.getType()) {
    case fsproto::LockType::READ:
      out.l_type = F_RDLCK;
      break;
    case fsproto::LockType::WRITE:
      out.l_type = F_WRLCK;
      break;
    default:
      out.l_type = F_UNLCK;
      break;
  }
  if (out.l_type != F_UNLCK) {
    out.l_start = off_t(c.getStart());
    out.l_len = off_t(c.getLength());
    out.l_pid = pid_t(c.getPid());
    out.l_whence = SEEK_SET;
  }
  fuse_reply_lock(req, &out);
}

void Filesystem::setlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, struct flock *lock,
                       bool sleep) {
  counters_.count(Op::kSetlk);
  uint64_t m = to_mds(ino);
  uint32_t type = lock_type(lock->l_type);
  // Noted before asking: a close racing with the grant still unlocks.
  if (type != uint32_t(fsproto::LockType::UNLOCK)) posix_locker(m, fi->lock_owner, false);
  int err = lock_request(req, m, uint32_t(fsproto::LockKind::POSIX), type, uint64_t(lock->l_start),
                         uint64_t(lock->l_len), fi->lock_owner, uint32_t(lock->l_pid), sleep);
  fuse_reply_err(req, -err);
}

void Filesystem::flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi, int op) {
  counters_.count(Op::kFlock);
  uint32_t type = (op & LOCK_SH)   ? uint32_t(fsproto::LockType::READ)
                  : (op & LOCK_EX) ? uint32_t(fsproto::LockType::WRITE)
                                   : uint32_t(fsproto::LockType::UNLOCK);
  const fuse_ctx *ctx = fuse_req_ctx(req);
  int err = lock_request(req, to_mds(ino), uint32_t(fsproto::LockKind::FLOCK), type, 0, 0,
                         fi->lock_owner, uint32_t(ctx->pid), !(op & LOCK_NB));
  fuse_reply_err(req, err == -EAGAIN ? EWOULDBLOCK : -err);
}

void Filesystem::fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len) {
  counters_.count(Op::kFallocate);
  uint64_t m = to_mds(ino);
  FileLayout layout;
  uint64_t size = 0;
  if (!open_file_data(req, m, &layout, &size)) return;
  uint64_t end = uint64_t(off) + uint64_t(len);
  if (mode == 0) {
    // Objects are allocated on write: reserving means growing the size.
    if (end > size) {
      std::lock_guard<std::mutex> l(open_mu_);
      OpenFile &f = open_[m];
      f.size = std::max(f.size, end);
      f.mtime = f.ctime = time_now();
      f.dirty = true;
    }
    fuse_reply_err(req, 0);
    return;
  }
  if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
    uint64_t stop = std::min(end, size);
    int err = stop > uint64_t(off) ? data_->zero(layout, uint64_t(off), stop - uint64_t(off)) : 0;
    if (err == 0 && stop > uint64_t(off)) {
      // The data changed, as by a write: new times, reported at close.
      std::lock_guard<std::mutex> l(open_mu_);
      OpenFile &f = open_[m];
      f.mtime = f.ctime = time_now();
      f.dirty = true;
    }
    fuse_reply_err(req, -err);
    return;
  }
  fuse_reply_err(req, EOPNOTSUPP);
}

int Filesystem::flush_everything(std::string *why) {
  if (closers_) closers_->drain();
  std::vector<uint64_t> dirty;
  {
    std::lock_guard<std::mutex> l(open_mu_);
    for (auto &[ino, f] : open_)
      if (f.dirty) dirty.push_back(ino);
  }
  for (uint64_t ino : dirty) settle_inline(ino);
  int first = 0;
  if (data_) {
    if (int err = data_->flush_all(); err < 0) {
      first = err;
      *why = std::string("file data could not be written out: ") + std::strerror(-err);
    }
  }
  for (uint64_t ino : dirty)
    if (int err = report_size(nullptr, ino); err < 0 && first == 0) {
      first = err;
      *why = "the size of inode " + std::to_string(ino) +
             " could not be reported: " + std::strerror(-err);
    }
  int err = 0;
  request(
      nullptr, [&](fsproto::Request::Builder r) { r.initFsync().setIno(0); }, &err);
  if (err < 0 && first == 0) {
    first = err;
    *why = std::string("the MDS did not make the session's changes safe: ") + std::strerror(-err);
  }
  std::string refused;
  if (int e = mds_.take_async_error(&refused); e < 0 && first == 0) {
    first = e == -ENOSPC ? e : -EIO;
    *why = "the MDS refused an asynchronous change: " + refused;
  }
  {
    std::lock_guard<std::mutex> l(data_error_mu_);
    if (data_error_ != 0 && first == 0) {
      first = data_error_;
      *why = data_error_what_ +
             ": a closed file's data could not be written out: " + std::strerror(-data_error_);
    }
  }
  return first;
}

}  // namespace strata::fuse
