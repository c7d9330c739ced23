// Where a file's written bytes resume: lseek(SEEK_DATA), for the media
// (Media::next_data).
#pragma once

#include <cstdint>

namespace strata::journal {

// The first offset >= `offset` of `fd` that is not a hole; `size` when the
// rest of the file is one. `offset` itself when the file system cannot say
// (SEEK_DATA unsupported, a block device, any error): callers then read.
uint64_t seek_data(int fd, uint64_t offset, uint64_t size);

}  // namespace strata::journal
