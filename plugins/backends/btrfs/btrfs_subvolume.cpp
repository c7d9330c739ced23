#include "btrfs_subvolume.h"

#include <linux/btrfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "filestore/posix_file.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::btrfs {
namespace {

// The inode number of every subvolume's root directory.
constexpr ino_t kSubvolumeRootInode = 256;

void check_name(const std::string &name) {
  if (name.empty() || name.size() > BTRFS_SUBVOL_NAME_MAX || name.find('/') != std::string::npos)
    throw sdk::Error(EINVAL, "bad subvolume name '" + name + "'");
}

}  // namespace

bool is_subvolume(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) filestore::throw_errno(errno, "stat " + path);
  return S_ISDIR(st.st_mode) && st.st_ino == kSubvolumeRootInode;
}

void create_subvolume(const std::string &parent, const std::string &name) {
  check_name(name);
  filestore::UniqueFd dir = filestore::open_dir(parent);
  struct btrfs_ioctl_vol_args args;
  std::memset(&args, 0, sizeof args);
  std::memcpy(args.name, name.data(), name.size());
  if (::ioctl(dir.get(), BTRFS_IOC_SUBVOL_CREATE, &args) != 0)
    filestore::throw_errno(errno, "create subvolume " + parent + "/" + name);
}

void snapshot_subvolume(const std::string &source, const std::string &parent,
                        const std::string &name, bool read_only) {
  check_name(name);
  filestore::UniqueFd src = filestore::open_dir(source);
  filestore::UniqueFd dir = filestore::open_dir(parent);
  struct btrfs_ioctl_vol_args_v2 args;
  std::memset(&args, 0, sizeof args);
  args.fd = src.get();
  args.flags = read_only ? BTRFS_SUBVOL_RDONLY : 0;
  std::memcpy(args.name, name.data(), name.size());
  if (::ioctl(dir.get(), BTRFS_IOC_SNAP_CREATE_V2, &args) != 0)
    filestore::throw_errno(errno, "snapshot " + source + " as " + parent + "/" + name);
}

void delete_subvolume(const std::string &parent, const std::string &name) {
  check_name(name);
  filestore::UniqueFd dir = filestore::open_dir(parent);
  struct btrfs_ioctl_vol_args_v2 v2;
  std::memset(&v2, 0, sizeof v2);
  std::memcpy(v2.name, name.data(), name.size());
  if (::ioctl(dir.get(), BTRFS_IOC_SNAP_DESTROY_V2, &v2) == 0) return;
  if (errno != ENOTTY && errno != EOPNOTSUPP && errno != EINVAL)
    filestore::throw_errno(errno, "delete subvolume " + parent + "/" + name);
  struct btrfs_ioctl_vol_args v1;
  std::memset(&v1, 0, sizeof v1);
  std::memcpy(v1.name, name.data(), name.size());
  if (::ioctl(dir.get(), BTRFS_IOC_SNAP_DESTROY, &v1) != 0)
    filestore::throw_errno(errno, "delete subvolume " + parent + "/" + name);
}

}  // namespace strata::btrfs
