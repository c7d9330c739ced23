#include "store_ops.h"

#include <cerrno>
#include <cstring>

#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

SnapInfo add_snapshot_record(const ImageRef &ref, const std::string &image_id,
                             const std::string &lock_value, const std::string &snap) {
  const strata_client_api *strata_api = ref.api;
  const Header h = read_header(ref, image_id);
  if (h.find_snap(snap)) fail(-EEXIST, ref, "snapshot " + snap + " exists in");
  SnapInfo s;
  s.id = h.snap_seq + 1;
  s.name = snap;
  s.size = h.size;
  s.created_ns = format::now_realtime_ns();
  const std::string key = format::snap_key(s.id), rec = format::encode_snap(s);
  const std::string seq = format::encode_u64(s.id);
  strata_bytes keys[2] = {{key.data(), key.size()}, {format::kSnapSeq, std::strlen(format::kSnapSeq)}};
  strata_bytes vals[2] = {{rec.data(), rec.size()}, {seq.data(), seq.size()}};
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_cmpxattr(op, format::kLockXattr, STRATA_CMP_EQ, lock_value.data(),
                           lock_value.size());
  strata_write_op_omap_set(op, keys, vals, 2);
  const int rc = strata_write_op_operate(op, ref.io, format::header_oid(image_id).c_str(), nullptr);
  strata_write_op_release(op);
  if (rc == -ECANCELED) fail(-EBUSY, ref, "lost the lock while adding snapshot " + snap + " to");
  check_rc(rc, ref, "adding snapshot " + snap + " to");
  return s;
}

ScopedAdminLock::ScopedAdminLock(const ImageRef &ref, const std::string &image_id,
                                 const std::string &why) {
  // A short lease: a crashed administrative call frees the image soon.
  lock_ = std::make_unique<ExclusiveLock>(ref, image_id, "admin/" + format::random_id(), why,
                                          60000);
  lock_->acquire();
}

ScopedAdminLock::~ScopedAdminLock() { lock_->release(); }

}  // namespace strata::rbd
