// A batch of object operations issued asynchronously through the client
// table, at most `max_inflight` at a time: each completion starts the next
// one (completion callbacks may start calls, not wait), so one batch fans
// out over many objects without a thread of its own. Either the caller
// waits for the batch, or its on_done hook runs (once, on whichever thread
// finished the last operation) and nobody waits.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "strata/client_api.h"

namespace strata::fuse {

struct ObjectOp {
  enum class Kind { kWrite, kRead, kStat, kRemove, kTruncate, kZero };
  Kind kind = Kind::kRead;
  strata_ioctx_t io = nullptr;
  std::string oid;
  const char *wbuf = nullptr;  // kWrite: must outlive the batch
  char *rbuf = nullptr;        // kRead
  uint64_t off = 0;            // in the object
  uint64_t len = 0;            // kWrite/kRead/kZero bytes; kTruncate: the new size
  strata_obj_stat stat{};      // kStat result
  int64_t rc = 0;              // result (bytes for kRead)
  // Why it failed to start (the client library's message), for the log.
  std::string failure;
};

// Counts the batches still running so their owner can wait them out before
// it goes away.
class BatchTracker {
 public:
  void begin();
  void end();
  void wait_idle();

 private:
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t running_ = 0;
};

class AioBatch : public std::enable_shared_from_this<AioBatch> {
 public:
  using DoneHook = std::function<void(AioBatch &)>;

  AioBatch(const strata_client_api *api, uint32_t max_inflight, BatchTracker *tracker,
           DoneHook on_done = nullptr);

  std::vector<ObjectOp> ops;  // filled before start(), read after completion

  // Starts the operations (no further changes to ops). Must be held by a
  // shared_ptr. Never blocks on the cluster.
  void start();
  // Blocks until every operation completed (and on_done returned).
  void wait();

  // The first failure among the operations, ignoring -ENOENT when asked
  // (a missing object is a hole); 0 if none.
  int first_error(bool ignore_enoent) const;

 private:
  struct Callback;
  static void on_complete(strata_completion_t c, void *arg);

  void pump();
  // Starts ops[i]; 0 or the -errno it failed to start with.
  int launch(size_t i, strata_write_op_t *op_out, strata_completion_t *c_out);
  // Records ops[i]'s result; true when it was the last one.
  bool record(size_t i, int64_t rc);
  void finish();

  const strata_client_api *api_;
  const uint32_t max_inflight_;
  BatchTracker *tracker_;
  DoneHook on_done_;

  std::mutex m_;
  std::condition_variable cv_;
  size_t next_ = 0, inflight_ = 0, completed_ = 0;
  bool finished_ = false;
};

}  // namespace strata::fuse
