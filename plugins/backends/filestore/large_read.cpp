#include "filestore/large_read.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "filestore/posix_file.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::filestore {
namespace {

constexpr size_t kAlign = 4096;
constexpr size_t kChunk = 8 << 20;  // one O_DIRECT request; larger ones gain nothing here

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

// One aligned buffer per reading thread, kept: the OSD reads with a few
// threads, and a fresh 8 MiB mapping per read would page-fault every time.
char *aligned_buffer() {
  thread_local std::unique_ptr<void, FreeDeleter> buf;
  if (!buf) {
    void *p = nullptr;
    if (posix_memalign(&p, kAlign, kChunk) != 0)
      throw sdk::make_error(ENOMEM, "no memory for a %zu-byte read buffer", kChunk);
    buf.reset(p);
  }
  return static_cast<char *>(buf.get());
}

// The prefix of [off, off+len) the page cache holds, copied without
// blocking on the disk (RWF_NOWAIT returns short where a page is missing).
size_t read_cached_prefix(int fd, char *dst, size_t len, uint64_t off) {
  size_t done = 0;
  while (done < len) {
    iovec iov{dst + done, len - done};
    ssize_t n = ::preadv2(fd, &iov, 1, static_cast<off_t>(off + done), RWF_NOWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN (not cached), EOPNOTSUPP, end of file
    done += static_cast<size_t>(n);
  }
  return done;
}

}  // namespace

size_t read_large(int cached_fd, const std::string &path, void *buf, size_t len, uint64_t off) {
  char *dst = static_cast<char *>(buf);
  size_t done = read_cached_prefix(cached_fd, dst, len, off);
  if (done == len) return done;

  int raw = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (raw < 0) {
    if (errno != EINVAL) throw_errno(errno, "open " + path + " for a direct read");
    return done + pread_full(cached_fd, dst + done, len - done, off + done, path);
  }
  UniqueFd fd(raw);
  char *bounce = aligned_buffer();
  while (done < len) {
    const uint64_t pos = off + done;
    const uint64_t start = pos / kAlign * kAlign;
    const size_t skip = static_cast<size_t>(pos - start);
    const size_t want = std::min(kChunk, (skip + (len - done) + kAlign - 1) / kAlign * kAlign);
    size_t got = pread_full(fd.get(), bounce, want, start, path);
    if (got <= skip) break;  // end of file
    size_t n = std::min(got - skip, len - done);
    std::memcpy(dst + done, bounce + skip, n);
    done += n;
    if (got < want) break;  // end of file
  }
  return done;
}

}  // namespace strata::filestore
