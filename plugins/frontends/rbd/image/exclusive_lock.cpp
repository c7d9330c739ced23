#include "exclusive_lock.h"

#include <cerrno>

#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

ExclusiveLock::ExclusiveLock(ImageRef ref, std::string image_id, std::string owner,
                             std::string description, uint32_t lease_ms)
    : ref_(std::move(ref)),
      oid_(format::header_oid(image_id)),
      owner_(std::move(owner)),
      description_(std::move(description)),
      lease_ms_(lease_ms) {}

std::string ExclusiveLock::value_for_new_lease() const {
  format::LockValue v{owner_, format::now_realtime_ns() + uint64_t{lease_ms_} * 1000000,
                      description_};
  return format::encode_lock(v);
}

void ExclusiveLock::acquire() {
  const strata_client_api *strata_api = ref_.api;
  for (int attempt = 0; attempt < 20; ++attempt) {
    strata_read_op_t rop = strata_read_op_new();
    char buf[4096];
    size_t len = 0;
    int xrc = 0;
    strata_read_op_assert_exists(rop);
    strata_read_op_getxattr(rop, format::kLockXattr, buf, sizeof buf, &len, &xrc);
    uint64_t version = 0;
    int rc = strata_read_op_operate(rop, ref_.io, oid_.c_str(), &version);
    strata_read_op_release(rop);
    if (rc == -ENODATA) {
      // No lock xattr at all: the version still guards the take below.
      strata_obj_stat st{};
      st.struct_size = sizeof st;
      rc = strata_stat(ref_.io, oid_.c_str(), &st);
      version = st.version;
      len = 0;
    }
    if (rc == -ENOENT) fail(-ENOENT, ref_, "no header for image");
    check_rc(rc, ref_, "reading the lock of");
    const auto lock = format::decode_lock(std::string(buf, std::min(len, sizeof buf)));
    const uint64_t now = format::now_realtime_ns();
    if (lock && lock->owner != owner_ && lock->expires_ns > now)
      fail(-EBUSY, ref_, "image locked (" + describe_holder(*lock, now) + "):");
    const auto started = std::chrono::steady_clock::now();
    const std::string value = value_for_new_lease();
    strata_write_op_t wop = strata_write_op_new();
    strata_write_op_assert_version(wop, version);
    strata_write_op_setxattr(wop, format::kLockXattr, value.data(), value.size());
    rc = strata_write_op_operate(wop, ref_.io, oid_.c_str(), nullptr);
    strata_write_op_release(wop);
    if (rc == -ERANGE) continue;  // the header changed under us: look again
    check_rc(rc, ref_, "taking the lock of");
    current_ = value;
    held_ = true;
    valid_until_ = started + std::chrono::milliseconds(lease_ms_);
    return;
  }
  fail(-EBUSY, ref_, "could not take the lock (the header kept changing) of");
}

int ExclusiveLock::renew() {
  if (!held_) return -EBUSY;
  const strata_client_api *strata_api = ref_.api;
  const auto started = std::chrono::steady_clock::now();
  const std::string value = value_for_new_lease();
  strata_write_op_t wop = strata_write_op_new();
  strata_write_op_cmpxattr(wop, format::kLockXattr, STRATA_CMP_EQ, current_.data(),
                           current_.size());
  strata_write_op_setxattr(wop, format::kLockXattr, value.data(), value.size());
  int rc = strata_write_op_operate(wop, ref_.io, oid_.c_str(), nullptr);
  strata_write_op_release(wop);
  if (rc == -ECANCELED || rc == -ENOENT) {
    held_ = false;
    return -EBUSY;
  }
  if (rc == 0) {
    current_ = value;
    valid_until_ = started + std::chrono::milliseconds(lease_ms_);
  }
  return rc;
}

void ExclusiveLock::release() {
  if (!held_) return;
  const strata_client_api *strata_api = ref_.api;
  strata_write_op_t wop = strata_write_op_new();
  strata_write_op_cmpxattr(wop, format::kLockXattr, STRATA_CMP_EQ, current_.data(),
                           current_.size());
  strata_write_op_setxattr(wop, format::kLockXattr, "", 0);
  (void)strata_write_op_operate(wop, ref_.io, oid_.c_str(), nullptr);
  strata_write_op_release(wop);
  held_ = false;
}

std::string make_lock_owner(const strata_client_api *strata_api, strata_cluster_t cluster) {
  char buf[256];
  int64_t n = strata_cluster_instance_id(cluster, buf, sizeof buf);
  std::string inst = n > 0 ? std::string(buf, std::min<size_t>(n, sizeof buf - 1)) : "client";
  // Two opens through one connection are two holders.
  return inst + "/" + format::random_id().substr(0, 8);
}

}  // namespace strata::rbd
