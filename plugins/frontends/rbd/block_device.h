// What an exported block device looks like to the rbd frontend's servers:
// the NBD server (nbd/) and the one-file FUSE export (map/) serve any
// BlockDevice; an open image (image/image.h) is one, and the tests give
// them an in-memory one.
//
// Requests are asynchronous: each call starts the operation and returns at
// once; `done` runs exactly once, with 0 or a negative errno, possibly on
// another thread (a client library thread) and possibly before the call
// returns. `done` must not block for long. Buffers stay the caller's: a
// read's `out` and a write's `data` must stay valid until `done` runs.
//
// Durability: a write or zeroing whose `done` reported 0 is durable on
// every replica when fua is set, and in any case once a later flush
// completes. A flush covers every request completed before it was issued
// (on any connection: the device is shared by all of them, NBD multi-conn).
//
// Threading: every method may be called from any thread, concurrently.
// Overlapping requests in flight at the same time complete in no promised
// order (as with a disk).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::rbd {

using Done = std::function<void(int result)>;

// A run of the device's address space and whether it holds data.
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool hole = false;  // reads as zeros and takes no space (NBD_STATE_HOLE)
  bool zero = false;  // reads as zeros (NBD_STATE_ZERO); true whenever hole is
};

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;

  virtual uint64_t size() const = 0;
  // Smallest block a request may address without a read-modify-write (1
  // means any byte), and the size the device prefers (its object size or
  // a divisor of it); powers of two, minimum <= preferred.
  virtual uint32_t min_block() const = 0;
  virtual uint32_t preferred_block() const = 0;
  virtual bool read_only() const = 0;
  // One line naming the device for messages: "pool/name" or "pool/name@snap".
  virtual std::string describe() const = 0;

  // Offsets and lengths are checked by the caller: off + len <= size(),
  // len > 0. A request past the end is the caller's bug, answered -EINVAL.
  virtual void read(uint64_t off, uint64_t len, char *out, Done done) = 0;
  virtual void write(uint64_t off, uint64_t len, const char *data, bool fua, Done done) = 0;
  // Discards [off, off+len): afterwards it reads as zeros (this device
  // promises that much more than NBD's TRIM) and whole objects inside it
  // give their space back.
  virtual void discard(uint64_t off, uint64_t len, bool fua, Done done) = 0;
  // Writes zeros; may_unmap allows doing it by discarding.
  virtual void write_zeroes(uint64_t off, uint64_t len, bool may_unmap, bool fua, Done done) = 0;
  virtual void flush(Done done) = 0;
  // A hint that [off, off+len) will be read soon (NBD_CMD_CACHE); done
  // when the prefetch is started or finished, whichever the device likes.
  virtual void cache(uint64_t off, uint64_t len, Done done) = 0;

  // Which parts of [off, off+len) hold data: extents in order, covering
  // at least [off, off+1) and at most [off, off+len) (a device may answer
  // fewer than all, as NBD_CMD_BLOCK_STATUS allows). 0 or -errno.
  virtual int extents(uint64_t off, uint64_t len, std::vector<Extent> *out) = 0;
};

}  // namespace strata::rbd
