// Pieces the administrative calls (image_store.cpp) and an open image's
// lock thread share: adding a snapshot record, and holding the lock for
// the length of one administrative call.
#pragma once

#include <memory>
#include <string>

#include "exclusive_lock.h"
#include "image_header.h"

namespace strata::rbd {

// Adds snapshot `snap` of the image to its header (id = snap_seq + 1),
// guarded by the lock value we hold (`lock_value`). Throws -EEXIST when
// the name is taken.
SnapInfo add_snapshot_record(const ImageRef &ref, const std::string &image_id,
                             const std::string &lock_value, const std::string &snap);

// The lock, taken for one administrative call and given back when it ends
// (-EBUSY when a live holder has it).
class ScopedAdminLock {
 public:
  ScopedAdminLock(const ImageRef &ref, const std::string &image_id, const std::string &why);
  ~ScopedAdminLock();
  const std::string &value() const { return lock_->current_value(); }

 private:
  std::unique_ptr<ExclusiveLock> lock_;
};

}  // namespace strata::rbd
