#include "store/store_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace strata::store {

Result<StoreSpace> filesystem_space(const std::string &dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0)
    return Status::Error(errno, "statvfs " + dir + ": " + std::strerror(errno));
  StoreSpace s;
  s.total_bytes = uint64_t{vfs.f_blocks} * vfs.f_frsize;
  uint64_t avail = uint64_t{vfs.f_bavail} * vfs.f_frsize;
  s.used_bytes = s.total_bytes > avail ? s.total_bytes - avail : 0;
  return s;
}

bool fits_outside_reserve(const StoreSpace &space, uint64_t len, int64_t reserve_pct) {
  if (space.total_bytes == 0) return true;
  uint64_t reserve = space.total_bytes / 100 * static_cast<uint64_t>(reserve_pct);
  uint64_t usable = space.total_bytes > reserve ? space.total_bytes - reserve : 0;
  return space.used_bytes <= usable && len <= usable - space.used_bytes;
}

double used_ratio(const StoreSpace &space) {
  if (space.total_bytes == 0) return 0;
  return static_cast<double>(space.used_bytes) / static_cast<double>(space.total_bytes);
}

}  // namespace strata::store
