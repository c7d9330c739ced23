// What FileData keeps per open file: its writeback buffer (dirty extents,
// and the extents of the one write-out in flight), the first write-out
// error since the last flush, and the read-ahead window with its clean
// cache. Guarded by `m`; `cv` signals the end of a write-out, of a
// prefetch and of an exclusive truncate/zero.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "data_extents.h"
#include "file_data.h"

namespace strata::fuse {

struct FileState {
  std::mutex m;
  std::condition_variable cv;

  FileLayout layout;            // as of the latest write
  strata_ioctx_t io = nullptr;  // the layout pool's (cached by FileData)

  // Writeback. `writing` is immutable while `writeout_active` (the batch
  // points into it); both overlay object reads.
  ExtentMap dirty;
  ExtentMap writing;
  bool writeout_active = false;
  bool exclusive = false;                  // a truncate/zero is changing the objects
  bool erased = false;                     // forget() dropped it: ops look it up again
  int error = 0;                           // first write-out failure since the last flush
  std::atomic<uint64_t> pending_bytes{0};  // dirty + writing
  // [0, dense) was written through this state with no hole in it, so
  // st_blocks of a file no bigger needs no stat of its objects (the
  // common case: a new file written front to back).
  uint64_t dense = 0;
  // An object was written, truncated or zeroed through this state: the
  // MDS may not know of it until the next size report (discard() then
  // refuses).
  bool objects_touched = false;

  // Inline data (FileLayout::inline_data), decided when the state is
  // made (or first used after an invalidation). While `objects_absent`,
  // `base` and then `dirty` are the file (zeros after them): objects are
  // neither read nor written. A write-out (the file outgrew its buffer)
  // or settle_inline past the inline limit moves `base` into `dirty` and
  // ends that (`left_inline` until settle_inline reports it).
  bool inline_decided = false;
  bool objects_absent = false;
  bool inline_changed = false;  // written, truncated or zeroed since the last settle
  bool left_inline = false;
  std::string base;

  // Read-ahead.
  ExtentMap clean;         // object contents read ahead
  uint64_t clean_gen = 0;  // bumped when object contents may have changed
  uint64_t last_end = 0;   // where the previous read ended
  uint64_t window = 0;     // 0: not sequential
  uint64_t ra_next = 0;    // read ahead up to here
  bool prefetch_active = false;
  uint64_t prefetch_lo = 0, prefetch_hi = 0;
};

}  // namespace strata::fuse
