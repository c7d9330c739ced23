// Which peer OSDs last said their disk is past the failsafe ratio. Every
// RepOpReply and heartbeat carries the sender's flag, so a primary learns a
// replica is nearly out of space within one write or heartbeat, long before
// the monitor's full flag reaches it through the map: a burst of writes
// cannot fill a replica's disk while the map catches up.
//
// Threading: thread-safe (messenger threads note, shard threads ask).
#pragma once

#include <cstdint>
#include <mutex>
#include <set>

namespace strata::osd {

class PeerFullness {
 public:
  void note(int32_t osd, bool failsafe_full) {
    std::lock_guard lk(mu_);
    if (failsafe_full)
      full_.insert(osd);
    else
      full_.erase(osd);
  }
  bool failsafe_full(int32_t osd) const {
    std::lock_guard lk(mu_);
    return full_.count(osd) != 0;
  }

 private:
  mutable std::mutex mu_;
  std::set<int32_t> full_;  // GUARDED_BY(mu_)
};

}  // namespace strata::osd
