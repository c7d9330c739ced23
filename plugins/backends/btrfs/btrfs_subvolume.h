// The btrfs subvolume ioctls the btrfs backend needs. Paths are split into a
// parent directory and a name because the ioctls act on a directory entry.
#pragma once

#include <string>

namespace strata::btrfs {

// True if `path` is the root directory of a btrfs subvolume.
bool is_subvolume(const std::string &path);

// BTRFS_IOC_SUBVOL_CREATE: an empty subvolume `parent/name`.
void create_subvolume(const std::string &parent, const std::string &name);

// BTRFS_IOC_SNAP_CREATE_V2: `parent/name` becomes a snapshot of the
// subvolume at `source`, read-only if asked. The ioctl commits a btrfs
// transaction, so the snapshot is durable when this returns.
void snapshot_subvolume(const std::string &source, const std::string &parent,
                        const std::string &name, bool read_only);

// BTRFS_IOC_SNAP_DESTROY_V2 (falling back to BTRFS_IOC_SNAP_DESTROY on older
// kernels): deletes the subvolume `parent/name` with everything in it.
void delete_subvolume(const std::string &parent, const std::string &name);

}  // namespace strata::btrfs
