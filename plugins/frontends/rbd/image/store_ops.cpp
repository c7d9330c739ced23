#include "store_ops.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "aio_fanout.h"
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
  // A clone's snapshot keeps reading through what the head reads through now.
  if (h.parent) s.parent_overlap = std::min(h.parent->overlap, h.size);
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

void check_name(const ImageRef &ref, const std::string &name, const char *what) {
  const std::string why = format::name_problem(name);
  if (!why.empty()) throw sdk::Error(-EINVAL, std::string(what) + " in pool " + ref.pool +
                                                  ": " + why);
}

void set_header_keys(const ImageRef &ref, const std::string &id, const std::string &lock_value,
                     const std::vector<std::pair<std::string, std::string>> &kv) {
  const strata_client_api *strata_api = ref.api;
  std::vector<strata_bytes> keys, vals;
  for (const auto &[k, v] : kv) {
    keys.push_back({k.data(), k.size()});
    vals.push_back({v.data(), v.size()});
  }
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_cmpxattr(op, format::kLockXattr, STRATA_CMP_EQ, lock_value.data(),
                           lock_value.size());
  strata_write_op_omap_set(op, keys.data(), vals.data(), keys.size());
  const int rc = strata_write_op_operate(op, ref.io, format::header_oid(id).c_str(), nullptr);
  strata_write_op_release(op);
  if (rc == -ECANCELED) fail(-EBUSY, ref, "lost the lock while updating the header of");
  check_rc(rc, ref, "updating the header of");
}

void refuse_if_locked(const ImageRef &ref, const Header &h, const std::string &what) {
  const uint64_t now = format::now_realtime_ns();
  if (h.locked_live(now))
    fail(-EBUSY, ref, what + ": image locked (" + describe_holder(*h.lock, now) + "):");
}

void for_each_object_op(const ImageRef &ref, const std::string &id, uint64_t first, uint64_t last,
                        const std::string &what,
                        const std::function<void(uint64_t, strata_write_op_t)> &build) {
  const strata_client_api *strata_api = ref.api;
  if (last <= first) return;
  std::vector<std::string> oids;
  for (uint64_t n = first; n < last; ++n) oids.push_back(format::data_oid(id, n));
  auto results = run_fanout(ref.api, oids.size(), kAdminFanout, [&](size_t i,
                                                                     strata_completion_t c) {
    strata_write_op_t op = strata_write_op_new();
    if (!op) return -ENOMEM;
    build(first + i, op);
    const int rc = strata_aio_write_op_operate(op, ref.io, oids[i].c_str(), c);
    strata_write_op_release(op);  // operate copied what it needs
    return rc;
  });
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i] < 0 && results[i] != -ENOENT)
      check_rc(results[i], ref, what + " (data object " + oids[i] + ") of");
}

}  // namespace strata::rbd
