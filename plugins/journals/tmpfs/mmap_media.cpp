#include "mmap_media.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "journal_log/medium_lock.h"
#include "journal_log/seek_data.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

using sdk::make_error;

std::unique_ptr<MmapMedia> MmapMedia::open(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw make_error(errno, "cannot open journal %s: %s", path.c_str(), strerror(errno));
  try {
    lock_medium(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    int e = errno ? errno : EINVAL;
    ::close(fd);
    throw make_error(e, "journal %s is not a non-empty regular file", path.c_str());
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  void *base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    throw make_error(e, "cannot map journal %s (%llu bytes): %s", path.c_str(),
                     static_cast<unsigned long long>(size), strerror(e));
  }
  return std::unique_ptr<MmapMedia>(
      new MmapMedia(path, fd, static_cast<uint8_t *>(base), size));
}

MmapMedia::~MmapMedia() {
  ::munmap(base_, size_);
  ::close(fd_);
}

void MmapMedia::check_range(const char *what, uint64_t offset, size_t len) const {
  if (offset > size_ || len > size_ - offset)
    throw make_error(EINVAL, "%s of %zu bytes at offset %llu is past the end of journal %s (%llu "
                     "bytes)", what, len, static_cast<unsigned long long>(offset), path_.c_str(),
                     static_cast<unsigned long long>(size_));
}

void MmapMedia::read(uint64_t offset, void *buf, size_t len) {
  check_range("read", offset, len);
  std::memcpy(buf, base_ + offset, len);
}

uint64_t MmapMedia::next_data(uint64_t offset) const { return seek_data(fd_, offset, size_); }

void MmapMedia::write(uint64_t offset, const void *buf, size_t len) {
  check_range("write", offset, len);
  std::memcpy(base_ + offset, buf, len);
}

}  // namespace strata::journal
