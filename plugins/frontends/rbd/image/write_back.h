// An open image's write-back acknowledgement, and the ordering it needs.
//
// NBD promises durability only for FUA writes and for what a FLUSH covers
// (as a disk with a volatile write cache does), so a plain write may be
// answered once it is issued rather than once every replica holds it. A
// writer at depth 1 then keeps the next request's objects in flight while
// the slowest object of the last one settles, instead of waiting for it.
//
// The price is ordering: a request arriving after such an answer must see
// that write. So every change is admitted here in arrival order, and a
// read or change overlapping one still in flight waits for it (whether it
// was answered early or not: waiting for an unanswered one is harmless).
// Answered bytes still in flight stay under a budget; a write beyond it is
// answered, in arrival order, once earlier ones finish, or when it finishes
// itself. A failed early-answered write cannot tell its writer any more:
// the image reports it on the next flush (open_image.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "block_device.h"

namespace strata::rbd {

class WriteBack {
 public:
  using Go = std::function<void()>;

  // max_bytes: answered bytes in flight at most; 0 answers every change
  // when it completes (write-through), the ordering still kept.
  explicit WriteBack(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  bool enabled() const { return max_bytes_ > 0; }

  // A change of [off, off+len) arrives: returns its ticket. `done` is its
  // writer's answer: with early_ack, 0 as soon as the budget has room
  // (possibly before admit returns); in any case the change's own result
  // from finish() if it was not answered by then. The caller keeps the
  // change's data alive until finish() (the writer's buffer is free once
  // answered).
  uint64_t admit(uint64_t off, uint64_t len, bool early_ack, Done done);
  // Runs go once no change admitted before `ticket` that overlaps it is in
  // flight: at once on this thread, or from the finish() that clears it.
  void when_ordered(uint64_t ticket, Go go);
  // The same for a read of [off, off+len): after every change admitted so
  // far that overlaps it.
  void when_clear(uint64_t off, uint64_t len, Go go);
  // Blocks until no change admitted so far overlaps [off, off+len).
  void wait_clear(uint64_t off, uint64_t len);
  // The change completed with rc (0 or -errno): answers its writer if it
  // was not answered yet, then whoever the freed budget and range let go.
  // Returns true when rc reached the writer.
  bool finish(uint64_t ticket, int rc);

  // Answered early and still in flight, for metrics and tests.
  uint64_t answered_bytes() const;
  uint64_t in_flight() const;

 private:
  struct Change {
    uint64_t off, len;
    bool early;
    bool answered = false;
    Done done;
  };
  struct Parked {
    uint64_t before;  // waits for overlapping changes with a smaller ticket
    uint64_t off, len;
    Go go;
  };

  bool blocked_locked(uint64_t before, uint64_t off, uint64_t len) const;
  // Answers waiting early changes, oldest first, while the budget allows.
  void answer_locked(std::vector<Done> *answers);
  void park_or_run(Parked p);

  const uint64_t max_bytes_;
  mutable std::mutex m_;
  uint64_t next_ticket_ = 1;
  std::map<uint64_t, Change> changes_;  // GUARDED_BY(m_): in flight, by ticket
  uint64_t answered_bytes_ = 0;         // GUARDED_BY(m_)
  std::vector<Parked> parked_;          // GUARDED_BY(m_): in arrival order
};

}  // namespace strata::rbd
