#include "store/staged_write.h"

#include "store/plugin_instances.h"

namespace strata::store {

void StageReleaser::release(uint64_t id) {
  std::lock_guard lk(mu);
  if (!backend || !backend->has_stage_release()) return;
  strata_err err{};
  // A failure leaves one orphan stage file for the next open's sweep;
  // nothing a caller could do about it here.
  backend->ops()->stage_release(backend->handle(), id, &err);
}

StagedWrite::~StagedWrite() {
  if (!queued_ && releaser_) releaser_->release(id_);
}

bool StagedWrite::bind(Transaction &t) {
  if (bound_) return true;
  for (strata_op &op : t.mutable_ops()) {
    if (op.type != STRATA_OP_WRITE_FULL || op.value.len != length_) continue;
    op.type = STRATA_OP_WRITE_STAGED;
    op.offset = id_;
    op.length = length_;
    op.value = {};
    bound_ = true;
    return true;
  }
  return false;
}

}  // namespace strata::store
