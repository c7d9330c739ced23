#include "file_media.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "journal_log/medium_lock.h"
#include "journal_log/seek_data.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

using sdk::make_error;

namespace {

// The alignment O_DIRECT needs on a regular file: what the file system
// reports (Linux 6.1+), else the common 4 KiB.
uint32_t direct_io_alignment(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align > 0) {
    uint32_t a = stx.stx_dio_offset_align;
    return a > stx.stx_dio_mem_align ? a : stx.stx_dio_mem_align;
  }
  return 4096;
}

}  // namespace

std::unique_ptr<FileMedia> FileMedia::open(const std::string &path,
                                           const FileMediaOptions &opts) {
  std::unique_ptr<FileMedia> m(new FileMedia());
  m->path_ = path;
  m->sync_ = opts.sync;
  const int base_flags = O_RDWR | O_CLOEXEC;
  if (opts.direct_io) {
    m->fd_ = ::open(path.c_str(), base_flags | O_DIRECT);
    if (m->fd_ >= 0) {
      m->direct_ = true;
    } else if (errno == EINVAL) {
      m->fallback_note_ = "the file system refuses O_DIRECT";
    } else {
      throw make_error(errno, "cannot open journal %s: %s", path.c_str(), strerror(errno));
    }
  }
  if (m->fd_ < 0) m->fd_ = ::open(path.c_str(), base_flags);
  if (m->fd_ < 0)
    throw make_error(errno, "cannot open journal %s: %s", path.c_str(), strerror(errno));

  lock_medium(m->fd_, path);
  struct stat st;
  if (::fstat(m->fd_, &st) != 0)
    throw make_error(errno, "cannot stat journal %s: %s", path.c_str(), strerror(errno));
  if (S_ISBLK(st.st_mode)) {
    m->block_device_ = true;
    uint64_t bytes = 0;
    int sector = 512;
    if (::ioctl(m->fd_, BLKGETSIZE64, &bytes) != 0)
      throw make_error(errno, "cannot read the size of block device %s: %s", path.c_str(),
                       strerror(errno));
    if (::ioctl(m->fd_, BLKSSZGET, &sector) != 0) sector = 512;
    m->size_ = bytes;
    m->alignment_ = m->direct_ ? static_cast<uint32_t>(sector) : 1;
  } else if (S_ISREG(st.st_mode)) {
    m->size_ = static_cast<uint64_t>(st.st_size);
    m->alignment_ = m->direct_ ? direct_io_alignment(m->fd_) : 1;
  } else {
    throw make_error(EINVAL, "journal %s is neither a regular file nor a block device",
                     path.c_str());
  }

  if (opts.io_uring) {
    std::string why;
    m->uring_ = UringSubmitter::create(16, &why);
    if (!m->uring_) m->fallback_note_ += (m->fallback_note_.empty() ? "" : "; ") + why;
  }
  return m;
}

FileMedia::~FileMedia() {
  uring_.reset();
  if (fd_ >= 0) ::close(fd_);
}

std::string FileMedia::describe_io() const {
  std::string s = uring_ ? "io_uring" : "pwrite";
  s += direct_ ? ", O_DIRECT" : ", buffered";
  s += sync_ == SyncMode::kDsync ? ", RWF_DSYNC writes" : ", fdatasync";
  if (!fallback_note_.empty()) s += " (" + fallback_note_ + ")";
  return s;
}

uint64_t FileMedia::next_data(uint64_t offset) const {
  // A block device has no holes to find; lseek would only say "data".
  return block_device_ ? offset : seek_data(fd_, offset, size_);
}

void FileMedia::read(uint64_t offset, void *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd_, static_cast<char *>(buf) + done, len - done,
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw make_error(errno, "%s: read of %zu bytes at offset %llu failed: %s", path_.c_str(),
                       len - done, static_cast<unsigned long long>(offset + done),
                       strerror(errno));
    if (n == 0)
      throw make_error(EIO, "%s: read at offset %llu is past the end (%llu bytes)",
                       path_.c_str(), static_cast<unsigned long long>(offset + done),
                       static_cast<unsigned long long>(size_));
    done += static_cast<size_t>(n);
  }
}

void FileMedia::write(uint64_t offset, const void *buf, size_t len) {
  const int flags = sync_ == SyncMode::kDsync ? RWF_DSYNC : 0;
  size_t done = 0;
  while (done < len) {
    iovec iov{const_cast<char *>(static_cast<const char *>(buf)) + done, len - done};
    ssize_t n = ::pwritev2(fd_, &iov, 1, static_cast<off_t>(offset + done), flags);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw make_error(n < 0 ? errno : EIO, "%s: write of %zu bytes at offset %llu failed: %s",
                       path_.c_str(), len - done, static_cast<unsigned long long>(offset + done),
                       n < 0 ? strerror(errno) : "no progress");
    done += static_cast<size_t>(n);
  }
}

void FileMedia::flush() {
  if (sync_ == SyncMode::kDsync) return;  // every write was durable on its own
  if (::fdatasync(fd_) != 0)
    throw make_error(errno, "%s: fdatasync failed: %s", path_.c_str(), strerror(errno));
}

void FileMedia::write_durable(std::span<const WriteRun> runs) {
  // An io_uring write takes a 32-bit length; a giant record goes by pwrite.
  bool fits_uring = true;
  for (const WriteRun &r : runs) fits_uring = fits_uring && r.len <= (size_t{1} << 30);
  if (uring_ && fits_uring)
    uring_->write_durable(fd_, runs, sync_, path_);
  else
    Media::write_durable(runs);
}

}  // namespace strata::journal
