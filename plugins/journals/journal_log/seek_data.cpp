#include "journal_log/seek_data.h"

#include <unistd.h>

#include <cerrno>

namespace strata::journal {

uint64_t seek_data(int fd, uint64_t offset, uint64_t size) {
  if (offset >= size) return size;
  off_t at = ::lseek(fd, static_cast<off_t>(offset), SEEK_DATA);
  if (at < 0) return errno == ENXIO ? size : offset;  // ENXIO: only a hole follows
  return static_cast<uint64_t>(at) < offset ? offset : static_cast<uint64_t>(at);
}

}  // namespace strata::journal
