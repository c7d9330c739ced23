// Large reads (whole 4 MiB objects, 16 MiB sequential reads): what the page
// cache already holds is copied from it; the rest is read with O_DIRECT.
// Staged writes go to disk with O_DIRECT, so their data is never cached, and
// this VM's buffered read path (readahead through the loop device) measured
// 250-480 MB/s cold against ~700 MB/s direct for the same 16 MiB files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::filestore {

// Reads below this many bytes always go through the page cache.
inline constexpr size_t kDirectReadMin = 1 << 20;

// Reads up to len bytes at off from the file `path`, already open (buffered)
// as cached_fd; fewer only at end of file. Falls back to buffered reads where
// the file system refuses O_DIRECT.
size_t read_large(int cached_fd, const std::string &path, void *buf, size_t len, uint64_t off);

}  // namespace strata::filestore
