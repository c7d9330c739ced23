// Which peer OSDs last said their disk is past the full ratio, and past
// the failsafe ratio. Every RepOpReply and heartbeat carries the sender's
// flags, so a primary learns a replica is (nearly) out of space within one
// write or heartbeat, long before the monitor's full flag reaches it
// through the map: a burst of writes cannot fill a replica's disk while
// the map catches up.
//
// Threading: thread-safe (messenger threads note, shard threads ask).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>

namespace strata::osd {

class PeerFullness {
 public:
  void note(int32_t osd, bool full, bool failsafe_full) {
    std::lock_guard lk(mu_);
    set(full_, osd, full || failsafe_full);
    set(failsafe_, osd, failsafe_full);
  }
  bool full(int32_t osd) const {
    std::lock_guard lk(mu_);
    return full_.count(osd) != 0;
  }
  bool failsafe_full(int32_t osd) const {
    std::lock_guard lk(mu_);
    return failsafe_.count(osd) != 0;
  }

 private:
  static void set(std::set<int32_t> &s, int32_t osd, bool on) {
    if (on)
      s.insert(osd);
    else
      s.erase(osd);
  }
  mutable std::mutex mu_;
  std::set<int32_t> full_;      // GUARDED_BY(mu_)
  std::set<int32_t> failsafe_;  // GUARDED_BY(mu_)
};

}  // namespace strata::osd
