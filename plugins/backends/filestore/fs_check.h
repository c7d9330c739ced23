// File-system type checks for the backends that need a particular one.
#pragma once

#include <cstdint>
#include <string>

namespace strata::filestore {

// statfs(2) f_type of the file system holding `path`.
uint64_t file_system_magic(const std::string &path);

// Throws Error(EINVAL) "<path> is on <found>, the <backend> backend needs
// <fs_name>" unless `path` is on a file system with magic `expected`.
void require_file_system(const std::string &path, uint64_t expected, const char *fs_name,
                         const char *backend);

}  // namespace strata::filestore
