#include "image_file.h"

#include <fcntl.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "strata/plugin.h"

namespace strata::rbd {

namespace {

// The kernel may cache names and attributes this long: nothing about the
// file changes while it is mounted (a device does not resize under a map).
constexpr double kCacheSeconds = 1.0;

timespec now() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

}  // namespace

ImageFile::ImageFile(std::shared_ptr<BlockDevice> device, std::string file_name, uint32_t max_io,
                     ExportLog log)
    : device_(std::move(device)),
      file_name_(std::move(file_name)),
      size_(device_->size()),
      max_io_(max_io),
      read_only_(device_->read_only()),
      log_(std::move(log)),
      mounted_at_(now()) {}

ImageFile::~ImageFile() {
  for (Handle *h : handles_) delete h;
}

void ImageFile::init(fuse_conn_info *conn) {
  conn->max_write = max_io_;
  conn->max_read = max_io_;  // must match the max_read mount option
  // The loop driver submits its direct I/O asynchronously: let the kernel
  // keep many of those requests in flight (they are "background" ones).
  if (conn->capable & FUSE_CAP_ASYNC_DIO) conn->want |= FUSE_CAP_ASYNC_DIO;
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  conn->max_background = 64;
  conn->congestion_threshold = 48;
}

struct stat ImageFile::attr_of(fuse_ino_t ino) const {
  struct stat st {};
  st.st_ino = ino;
  st.st_uid = 0;
  st.st_gid = 0;
  st.st_atim = st.st_mtim = st.st_ctim = mounted_at_;
  st.st_blksize = device_->preferred_block();
  if (ino == kRootIno) {
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 2;
  } else {
    st.st_mode = S_IFREG | (read_only_ ? 0444 : 0644);
    st.st_nlink = 1;
    st.st_size = static_cast<off_t>(size_);
    // Counted as all allocated: the real figure would take a walk over
    // every extent for each stat(2).
    st.st_blocks = static_cast<blkcnt_t>((size_ + 511) / 512);
  }
  return st;
}

void ImageFile::lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  if (parent != kRootIno || file_name_ != name) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fuse_entry_param e{};
  e.ino = kFileIno;
  e.generation = 1;
  e.attr = attr_of(kFileIno);
  e.attr_timeout = kCacheSeconds;
  e.entry_timeout = kCacheSeconds;
  fuse_reply_entry(req, &e);
}

void ImageFile::getattr(fuse_req_t req, fuse_ino_t ino) {
  if (ino != kRootIno && ino != kFileIno) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  struct stat st = attr_of(ino);
  fuse_reply_attr(req, &st, kCacheSeconds);
}

void ImageFile::setattr(fuse_req_t req, fuse_ino_t ino, const struct stat &attr, int to_set) {
  // A block device neither grows nor shrinks, and its owner and mode are
  // the export's: only a "truncate" to the size it already has (O_TRUNC
  // aside, tools do that) and times, which are accepted and forgotten
  // (touch, tar), succeed.
  bool same_size = (to_set & FUSE_SET_ATTR_SIZE) && ino == kFileIno &&
                   static_cast<uint64_t>(attr.st_size) == size_;
  int refused = to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID);
  if (refused || ((to_set & FUSE_SET_ATTR_SIZE) && !same_size)) {
    fuse_reply_err(req, EPERM);
    return;
  }
  getattr(req, ino);
}

void ImageFile::readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off) {
  if (ino != kRootIno) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  struct Entry {
    const char *name;
    fuse_ino_t ino;
  };
  const Entry entries[] = {{".", kRootIno}, {"..", kRootIno}, {file_name_.c_str(), kFileIno}};
  std::vector<char> buf(size);
  size_t used = 0;
  // An entry's offset is the index of the one after it, so a listing
  // resumed at `off` starts at entries[off].
  for (off_t i = std::max<off_t>(off, 0); i < off_t(std::size(entries)); ++i) {
    struct stat st {};
    st.st_ino = entries[i].ino;
    st.st_mode = entries[i].ino == kRootIno ? S_IFDIR : S_IFREG;
    size_t need = fuse_add_direntry(req, buf.data() + used, size - used, entries[i].name, &st, i + 1);
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void ImageFile::statfs(fuse_req_t req) {
  // The file system is exactly full: nothing can be created in it, and
  // the file already owns all of the device.
  struct statvfs sv {};
  sv.f_bsize = sv.f_frsize = device_->preferred_block();
  sv.f_blocks = size_ / sv.f_frsize;
  sv.f_files = 2;
  sv.f_namemax = 255;
  fuse_reply_statfs(req, &sv);
}

void ImageFile::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi) {
  if (ino != kFileIno) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if (fi->flags & O_TRUNC) {
    fuse_reply_err(req, EPERM);  // atomic_o_trunc: the truncation comes here, not to setattr
    return;
  }
  if (read_only_ && (fi->flags & O_ACCMODE) != O_RDONLY) {
    fuse_reply_err(req, EROFS);  // root passes default_permissions' 0444
    return;
  }
  // Straight to the device: no page cache, so the loop driver's O_DIRECT
  // works and nothing is cached twice (the loop device has its own).
  fi->direct_io = 1;
  fi->keep_cache = 0;
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 15)
  // Writes to different ranges need not wait for each other on the
  // inode's lock (a block device orders nothing).
  fi->parallel_direct_writes = 1;
#endif
  auto h = std::make_unique<Handle>();
  fi->fh = reinterpret_cast<uint64_t>(h.get());
  {
    std::lock_guard<std::mutex> l(handles_mu_);
    handles_.insert(h.get());
  }
  if (fuse_reply_open(req, fi) == 0) {
    h.release();  // owned by handles_ until release()
  } else {
    std::lock_guard<std::mutex> l(handles_mu_);  // interrupted: no release will come
    handles_.erase(h.get());
  }
}

void ImageFile::release(fuse_req_t req, fuse_file_info *fi) {
  Handle *h = &handle(fi);
  {
    std::lock_guard<std::mutex> l(handles_mu_);
    handles_.erase(h);
  }
  delete h;
  fuse_reply_err(req, 0);
}

}  // namespace strata::rbd
