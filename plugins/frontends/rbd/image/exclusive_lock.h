// The exclusive lock of an image: the header's xattr "lock" holds
// "<owner> <expires_ns> <description>" (format::LockValue). Taking it is a
// read of the header's lock and version followed by a write guarded by
// that version, so of two takers racing only one wins; renewing and
// releasing are guarded by the value we wrote (cmpxattr), so they never
// touch a lock someone else took over after our lease ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "image_header.h"

namespace strata::rbd {

class ExclusiveLock {
 public:
  // owner: unique per holder (the client instance id plus a nonce).
  ExclusiveLock(ImageRef ref, std::string image_id, std::string owner, std::string description,
                uint32_t lease_ms);

  // Takes the lock, or takes over an expired one. Throws -EBUSY naming the
  // live holder.
  void acquire();
  // Extends the lease. 0, -EBUSY when the lock is no longer ours (someone
  // took it over), or another -errno (a failed renewal: try again).
  int renew();
  // Gives the lock up if it is still ours. Never throws.
  void release();

  bool held() const { return held_; }
  // Until when our lease certainly lasts: from just before the write that
  // took or last renewed it (a steady-clock time, so no clock jumps).
  std::chrono::steady_clock::time_point valid_until() const { return valid_until_; }
  const std::string &owner() const { return owner_; }
  // The value we last wrote (guards changes made while holding the lock).
  const std::string &current_value() const { return current_; }

 private:
  std::string value_for_new_lease() const;

  ImageRef ref_;
  std::string oid_;
  std::string owner_;
  std::string description_;
  uint32_t lease_ms_;
  std::string current_;  // the value we last wrote
  bool held_ = false;
  std::chrono::steady_clock::time_point valid_until_{};
};

// A unique lock owner for this client connection.
std::string make_lock_owner(const strata_client_api *api, strata_cluster_t cluster);

}  // namespace strata::rbd
