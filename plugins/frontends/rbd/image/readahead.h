// Read-ahead for sequential readers of an image. A kernel reading a block
// device one 128 KiB request at a time waits a full round trip per
// request; once reads arrive in order, this fetches the range ahead (a
// window that doubles up to max_bytes) as blocks of up to 128 KiB, in
// parallel, and later reads are answered from them.
//
// Never stale: a write (or discard) to an object drops that object's
// blocks when it starts and again when it ends, marks blocks still being
// fetched as stale (they are thrown away on arrival), and no block of an
// object is fetched while a write to it is in flight.
//
// Thread-safe. Waiter callbacks run without the lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::rbd {

class Readahead {
 public:
  struct Block {
    uint64_t objno = 0, off = 0, len = 0;  // off, len: within the object
    std::vector<char> data;                // len bytes once fetched
    bool fetched = false;
    bool stale = false;
    uint64_t age = 0;  // for eviction: lower is older
    // Reads waiting for this block: called with the block when fetched
    // and still good, with nullptr otherwise (read it yourself).
    std::vector<std::function<void(const Block *)>> waiters;
  };
  using BlockPtr = std::shared_ptr<Block>;

  Readahead(uint64_t max_bytes, uint32_t object_size, uint64_t image_size);

  bool enabled() const { return max_bytes_ > 0; }
  uint32_t block_size() const { return block_; }

  // Notes a read request; returns the image range to prefetch now, if any
  // ({0,0}: nothing).
  std::pair<uint64_t, uint64_t> on_read(uint64_t off, uint64_t len);

  enum class Serve { kMiss, kHit, kWaiting };
  // Tries to answer [off, off+len) of object objno (within one block) into
  // dst. kWaiting: `waiter` runs once the block arrives (see Block).
  Serve serve(uint64_t objno, uint64_t off, uint64_t len, char *dst,
              std::function<void(const Block *)> waiter);

  // Blocks of [off, off+len) (image offsets) to fetch now: not present,
  // within the memory bound, not being written. The caller reads each
  // into block->data and calls fetched().
  std::vector<BlockPtr> begin_prefetch(uint64_t off, uint64_t len);
  // rc: bytes read (short: zeros follow), -ENOENT (all zeros) or -errno.
  void fetched(const BlockPtr &b, int64_t rc);

  void begin_write(uint64_t objno);
  void end_write(uint64_t objno);

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // objno, offset in object
  // Drops objno's blocks, marking those in flight stale. Returns waiters
  // to tell (with nullptr) once the lock is released.
  void drop_object_locked(uint64_t objno, std::vector<BlockPtr> *orphans);
  void evict_locked(uint64_t need);
  static void tell_waiters(const BlockPtr &b, const Block *result);

  const uint64_t max_bytes_;
  const uint32_t object_size_;
  const uint32_t block_;
  const uint64_t image_size_;

  std::mutex m_;
  std::map<Key, BlockPtr> blocks_;
  uint64_t bytes_ = 0;  // of blocks_ (fetched or not)
  uint64_t next_age_ = 0;
  std::unordered_map<uint64_t, uint32_t> writers_;  // objno -> writes in flight
  // Sequential detection.
  uint64_t last_end_ = UINT64_MAX;
  uint32_t run_ = 0;
  uint64_t window_ = 0;
  uint64_t fetched_to_ = 0;  // prefetch has been started up to here
};

}  // namespace strata::rbd
