// A thread that handles the MDS's Revoke and LockGranted messages in
// order, off the session's callback thread (which must not wait) and off
// the FUSE workers (kernel invalidations from a worker can deadlock).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace strata::fuse {

class MessageWorker {
 public:
  MessageWorker();
  ~MessageWorker();  // runs what is queued, then joins
  void post(std::function<void()> job);
  size_t queued() const;

 private:
  void run();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::fuse
