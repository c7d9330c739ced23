// Building transmission-phase replies (simple and structured) as bytes and
// iovecs ready for one write. No I/O here: the connection writes them.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "block_device.h"

namespace strata::rbd::nbd {

// One reply: headers this object owns plus payload pointing into buffers
// the caller keeps alive until it has been written.
class Reply {
 public:
  const std::vector<iovec> &iov() const { return iov_; }

  void simple(uint64_t cookie, uint32_t error, const char *data = nullptr, size_t len = 0);
  // A structured chunk; `done` marks the last one of the reply.
  void chunk(uint64_t cookie, uint16_t type, bool done, const std::string &head,
             const char *data = nullptr, size_t len = 0);

 private:
  void add(const std::string &bytes);
  void add(const char *data, size_t len);

  std::deque<std::string> owned_;  // a deque: its strings never move as it grows
  std::vector<iovec> iov_;
};

// A structured reply to a successful READ of `len` bytes at `offset` from
// `data`: OFFSET_DATA chunks, and OFFSET_HOLE chunks for aligned runs of
// `granule` bytes that are all zeros (they read as zeros, which is all a
// hole chunk promises) unless `dont_fragment`, which asks for one chunk.
void structured_read(Reply *r, uint64_t cookie, uint64_t offset, const char *data, uint32_t len,
                     uint32_t granule, bool dont_fragment);

// A structured error reply (one NBD_REPLY_TYPE_ERROR chunk, done).
void structured_error(Reply *r, uint64_t cookie, uint32_t error, const std::string &message);

// The base:allocation descriptors for [offset, offset+len) from the
// device's extents (clipped to the range, neighbours with equal flags
// merged; only the first when `req_one`), as a BLOCK_STATUS chunk. False
// (and nothing added) when the extents do not start at `offset`.
bool structured_block_status(Reply *r, uint64_t cookie, uint32_t context_id, uint64_t offset,
                             uint32_t len, const std::vector<Extent> &extents, bool req_one);

}  // namespace strata::rbd::nbd
