// Whole-file and range operations on data files that go beyond plain
// read/write: reflink clones, sparse copies and hole punching.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::filestore {

// Shares all of src's extents with dst (FICLONE). dst must be empty and open
// for writing. Returns false when the file system cannot reflink these files
// (EOPNOTSUPP, EXDEV, EINVAL, ...); throws on media errors.
bool try_reflink(int src_fd, int dst_fd, std::string_view what);

// Copies [0, size) of src into dst, skipping holes so sparse objects stay
// sparse, and sets dst's size to `size`. dst must be empty.
void copy_file_data(int src_fd, int dst_fd, uint64_t size, std::string_view what);

// try_reflink, else copy_file_data. Returns true if the clone was a reflink.
bool clone_file_data(int src_fd, int dst_fd, uint64_t size, std::string_view what);

// Makes [offset, offset+length) read as zeros without changing the file size:
// punches a hole (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), or writes
// zeros where the file system cannot punch.
void zero_range(int fd, uint64_t offset, uint64_t length, std::string_view what);

}  // namespace strata::filestore
