// Background write-out of closed files. With the writeback cache, close(2)
// returns once the file's data is buffered here; these threads write it
// to the data objects and report the size (under the fileWrite lease,
// which nobody else can get before this client flushes: see revoke.cpp).
// fsync, unmount and a revoke still wait for the data.
//
// The jobs of one inode run in order on one thread (a close's write-out,
// then the last release's); different inodes' jobs run in parallel.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "message_worker.h"

namespace strata::fuse {

class CloseWorkers {
 public:
  explicit CloseWorkers(size_t threads);
  ~CloseWorkers();  // runs what is queued, then joins

  void post(uint64_t ino, std::function<void()> job);
  // Waits until every job posted before the call has run.
  void drain();
  size_t pending() const;

 private:
  std::vector<std::unique_ptr<MessageWorker>> workers_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t posted_ = 0;
  std::set<uint64_t> open_;  // ids of jobs posted, not yet run
};

}  // namespace strata::fuse
