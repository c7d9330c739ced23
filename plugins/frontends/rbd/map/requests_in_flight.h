// Counts the device requests started on behalf of FUSE requests and not
// yet answered, so that stop() can wait for the last Done before the FUSE
// session it replies on is destroyed.
//
// Threading: any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace strata::rbd {

class RequestsInFlight {
 public:
  void begin() {
    std::lock_guard<std::mutex> l(mu_);
    ++count_;
  }
  void end() {
    std::lock_guard<std::mutex> l(mu_);
    if (--count_ == 0) idle_.notify_all();
  }
  // Returns once no request is in flight.
  void wait_idle() {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  uint64_t count_ = 0;  // guarded by mu_
};

}  // namespace strata::rbd
