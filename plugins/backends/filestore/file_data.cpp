#include "filestore/file_data.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "filestore/posix_file.h"

namespace strata::filestore {
namespace {

constexpr size_t kCopyChunk = 1u << 20;

bool is_unsupported(int err) {
  return err == EOPNOTSUPP || err == ENOTTY || err == EXDEV || err == EINVAL || err == ENOSYS ||
         err == EPERM;
}

// Copies [offset, offset+len) with copy_file_range (which may itself share
// extents), falling back to read/write when the kernel refuses.
void copy_range(int src, int dst, uint64_t offset, uint64_t len, std::string_view what) {
  bool use_copy_file_range = true;
  std::vector<char> buf;
  while (len > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(len, kCopyChunk));
    if (use_copy_file_range) {
      loff_t in = static_cast<loff_t>(offset), out = static_cast<loff_t>(offset);
      ssize_t n = ::copy_file_range(src, &in, dst, &out, chunk, 0);
      if (n > 0) {
        offset += static_cast<uint64_t>(n);
        len -= static_cast<uint64_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && !is_unsupported(errno)) throw_errno(errno, "copy " + std::string(what));
      use_copy_file_range = false;  // unsupported, or 0 = source shorter than expected
    }
    buf.resize(chunk);
    size_t got = pread_full(src, buf.data(), chunk, offset, what);
    if (got == 0) return;  // source ends early: the rest stays a hole
    pwrite_all(dst, buf.data(), got, offset, what);
    offset += got;
    len -= got;
  }
}

}  // namespace

bool try_reflink(int src_fd, int dst_fd, std::string_view what) {
  if (::ioctl(dst_fd, FICLONE, src_fd) == 0) return true;
  int err = errno;
  if (is_unsupported(err)) return false;
  throw_errno(err, "reflink " + std::string(what));
}

void copy_file_data(int src_fd, int dst_fd, uint64_t size, std::string_view what) {
  uint64_t pos = 0;
  while (pos < size) {
    off_t data = ::lseek(src_fd, static_cast<off_t>(pos), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole up to end of file
      if (errno == EINVAL) {      // no SEEK_DATA support: copy everything
        copy_range(src_fd, dst_fd, pos, size - pos, what);
        break;
      }
      throw_errno(errno, "seek in " + std::string(what));
    }
    if (static_cast<uint64_t>(data) >= size) break;
    off_t hole = ::lseek(src_fd, data, SEEK_HOLE);
    if (hole < 0) throw_errno(errno, "seek in " + std::string(what));
    uint64_t end = std::min<uint64_t>(static_cast<uint64_t>(hole), size);
    copy_range(src_fd, dst_fd, static_cast<uint64_t>(data), end - static_cast<uint64_t>(data),
               what);
    pos = end;
  }
  truncate_fd(dst_fd, size, what);
}

bool clone_file_data(int src_fd, int dst_fd, uint64_t size, std::string_view what) {
  if (try_reflink(src_fd, dst_fd, what)) {
    truncate_fd(dst_fd, size, what);
    return true;
  }
  copy_file_data(src_fd, dst_fd, size, what);
  return false;
}

void zero_range(int fd, uint64_t offset, uint64_t length, std::string_view what) {
  if (length == 0) return;
  if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(length)) == 0)
    return;
  if (errno != EOPNOTSUPP) throw_errno(errno, "punch hole in " + std::string(what));
  std::vector<char> zeros(static_cast<size_t>(std::min<uint64_t>(length, kCopyChunk)), 0);
  while (length > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(length, zeros.size()));
    pwrite_all(fd, zeros.data(), n, offset, what);
    offset += n;
    length -= n;
  }
}

}  // namespace strata::filestore
