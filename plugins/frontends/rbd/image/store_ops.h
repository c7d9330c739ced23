// Pieces the administrative calls (image_store*.cpp) and an open image's
// lock thread share: adding a snapshot record, holding the lock for the
// length of one administrative call, guarded header updates.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// Object calls in flight for one administrative call.
inline constexpr size_t kAdminFanout = 32;

// Throws -EINVAL naming what is wrong with an image or snapshot name.
void check_name(const ImageRef &ref, const std::string &name, const char *what);

// Sets header keys, guarded by the lock value we hold (-EBUSY if lost).
void set_header_keys(const ImageRef &ref, const std::string &id, const std::string &lock_value,
                     const std::vector<std::pair<std::string, std::string>> &kv);

// Throws -EBUSY naming the holder when a live holder has the lock.
void refuse_if_locked(const ImageRef &ref, const Header &h, const std::string &what);

// The clone_<id> keys of a data object (id -> value); *rc_out -ENOENT when
// the object is missing.
std::map<uint64_t, std::string> list_clones(const ImageRef &ref, const std::string &oid,
                                            int *rc_out);

}  // namespace strata::rbd
