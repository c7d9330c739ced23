#include "bench/store/fs_info.h"

#include <sys/statvfs.h>
#include <sys/vfs.h>

#include <cstdio>

namespace strata::store_bench {

std::string fs_type(const std::string &dir) {
  struct statfs s {};
  if (::statfs(dir.c_str(), &s) != 0) return "";
  // Magic numbers from linux/magic.h (not included: it is not in every
  // libc's headers, and these values are ABI).
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0xEF53UL: return "ext4";
    case 0x01021994UL: return "tmpfs";
    case 0x794c7630UL: return "overlayfs";
    case 0x2FC12FC1UL: return "zfs";
    default: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "unknown (0x%lx)", static_cast<unsigned long>(s.f_type));
      return buf;
    }
  }
}

uint64_t free_bytes(const std::string &dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return 0;
  return static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
}

}  // namespace strata::store_bench
