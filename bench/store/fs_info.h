// What file system a directory is on: the bench prints it, and a btrfs pair
// needs a btrfs directory.
#pragma once

#include <cstdint>
#include <string>

namespace strata::store_bench {

// "xfs", "btrfs", "ext4", "tmpfs", ... or "unknown (0x...)"; "" if the
// directory cannot be examined.
std::string fs_type(const std::string &dir);

// Bytes available to an unprivileged writer; 0 if unknown.
uint64_t free_bytes(const std::string &dir);

}  // namespace strata::store_bench
