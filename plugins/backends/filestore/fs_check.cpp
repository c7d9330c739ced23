#include "filestore/fs_check.h"

#include <linux/magic.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstdio>

#include "filestore/posix_file.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::filestore {
namespace {

std::string describe_magic(uint64_t magic) {
  switch (magic) {
    case XFS_SUPER_MAGIC:
      return "xfs";
    case BTRFS_SUPER_MAGIC:
      return "btrfs";
    case EXT4_SUPER_MAGIC:
      return "ext2/3/4";
    case TMPFS_MAGIC:
      return "tmpfs";
    case OVERLAYFS_SUPER_MAGIC:
      return "overlayfs";
    default:
      break;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "file system 0x%llx", static_cast<unsigned long long>(magic));
  return buf;
}

}  // namespace

uint64_t file_system_magic(const std::string &path) {
  struct statfs fs;
  if (::statfs(path.c_str(), &fs) != 0) throw_errno(errno, "statfs " + path);
  return static_cast<uint64_t>(fs.f_type);
}

void require_file_system(const std::string &path, uint64_t expected, const char *fs_name,
                         const char *backend) {
  uint64_t found = file_system_magic(path);
  if (found == expected) return;
  throw sdk::Error(EINVAL, path + " is on " + describe_magic(found) + ", the " + backend +
                               " backend needs " + fs_name);
}

}  // namespace strata::filestore
