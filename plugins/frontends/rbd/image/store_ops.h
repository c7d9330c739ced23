// Pieces the administrative calls (image_store*.cpp) and an open image's
// lock thread share: adding a snapshot record, holding the lock for the
// length of one administrative call, guarded header updates, one write op
// per data object in parallel.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "clone_ops.h"
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

// The store's way to other pools, for load_parent_chain and the like.
inline PoolResolver pools_of(ImageStore &store) {
  return [&store](const std::string &pool, strata_ioctx_t *out) {
    return store.pool_ioctx(pool, out);
  };
}

// Object calls in flight for one administrative call.
inline constexpr size_t kAdminFanout = 32;

// Throws -EINVAL naming what is wrong with an image or snapshot name.
void check_name(const ImageRef &ref, const std::string &name, const char *what);

// Sets header keys, guarded by the lock value we hold (-EBUSY if lost).
void set_header_keys(const ImageRef &ref, const std::string &id, const std::string &lock_value,
                     const std::vector<std::pair<std::string, std::string>> &kv);

// Throws -EBUSY naming the holder when a live holder has the lock.
void refuse_if_locked(const ImageRef &ref, const Header &h, const std::string &what);

// Runs one write op per data object first..last-1 of image `id`, in
// parallel (kAdminFanout at a time): build(objno, op) adds its steps.
// Missing objects are fine (-ENOENT counts as done); any other failure
// throws, naming the object and `what`.
void for_each_object_op(const ImageRef &ref, const std::string &id, uint64_t first, uint64_t last,
                        const std::string &what,
                        const std::function<void(uint64_t, strata_write_op_t)> &build);

}  // namespace strata::rbd
