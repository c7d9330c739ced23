#include "data_aio.h"

#include <cerrno>

namespace strata::fuse {

void BatchTracker::begin() {
  std::lock_guard lk(m_);
  ++running_;
}

void BatchTracker::end() {
  std::lock_guard lk(m_);
  --running_;
  cv_.notify_all();
}

void BatchTracker::wait_idle() {
  std::unique_lock lk(m_);
  cv_.wait(lk, [&] { return running_ == 0; });
}

// What a completion's callback needs: the batch (kept alive until the
// callback is done), the op's index and the write op built for it.
struct AioBatch::Callback {
  std::shared_ptr<AioBatch> batch;
  size_t index = 0;
  strata_write_op_t op = nullptr;
};

AioBatch::AioBatch(const strata_client_api *api, uint32_t max_inflight, BatchTracker *tracker,
                   DoneHook on_done)
    : api_(api),
      max_inflight_(max_inflight == 0 ? 1 : max_inflight),
      tracker_(tracker),
      on_done_(std::move(on_done)) {}

void AioBatch::start() {
  if (tracker_) tracker_->begin();
  if (ops.empty()) {
    finish();
    return;
  }
  pump();
}

void AioBatch::pump() {
  for (;;) {
    size_t i;
    {
      std::lock_guard lk(m_);
      if (next_ >= ops.size() || inflight_ >= max_inflight_) return;
      i = next_++;
      ++inflight_;
    }
    auto *cb = new Callback{shared_from_this(), i, nullptr};
    strata_completion_t c = nullptr;
    int rc = api_->completion_create(&AioBatch::on_complete, cb, &c);
    if (rc == 0) rc = launch(i, &cb->op, &c);
    if (rc == 0) continue;
    // Not started: the completion stays unused and no callback comes.
    if (const char *why = api_->last_error(); why && *why) ops[i].failure = why;
    if (c) api_->completion_release(c);
    if (cb->op) api_->write_op_release(cb->op);
    delete cb;
    if (record(i, rc)) {
      finish();
      return;
    }
  }
}

int AioBatch::launch(size_t i, strata_write_op_t *op_out, strata_completion_t *c_out) {
  ObjectOp &o = ops[i];
  strata_completion_t c = *c_out;
  switch (o.kind) {
    case ObjectOp::Kind::kWrite:
      return api_->aio_write(o.io, o.oid.c_str(), c, o.wbuf, o.len, o.off);
    case ObjectOp::Kind::kRead:
      return api_->aio_read(o.io, o.oid.c_str(), c, o.rbuf, o.len, o.off);
    case ObjectOp::Kind::kStat:
      o.stat.struct_size = sizeof o.stat;
      return api_->aio_stat(o.io, o.oid.c_str(), c, &o.stat);
    case ObjectOp::Kind::kRemove:
      return api_->aio_remove(o.io, o.oid.c_str(), c);
    case ObjectOp::Kind::kTruncate:
    case ObjectOp::Kind::kZero: {
      // Only trims or zeroes an object that exists: strata_truncate alone
      // would create a missing one.
      strata_write_op_t op = api_->write_op_new();
      if (!op) return -ENOMEM;
      *op_out = op;
      api_->write_op_assert_exists(op);
      if (o.kind == ObjectOp::Kind::kTruncate)
        api_->write_op_truncate(op, o.len);
      else
        api_->write_op_zero(op, o.off, o.len);
      return api_->aio_write_op_operate(op, o.io, o.oid.c_str(), c);
    }
  }
  return -EINVAL;
}

void AioBatch::on_complete(strata_completion_t c, void *arg) {
  auto *cb = static_cast<Callback *>(arg);
  const int64_t rc = cb->batch->api_->completion_get_return_value(c);
  cb->batch->api_->completion_release(c);
  if (cb->op) cb->batch->api_->write_op_release(cb->op);
  std::shared_ptr<AioBatch> batch = std::move(cb->batch);
  const size_t i = cb->index;
  delete cb;
  if (batch->record(i, rc))
    batch->finish();
  else
    batch->pump();
}

bool AioBatch::record(size_t i, int64_t rc) {
  std::lock_guard lk(m_);
  ops[i].rc = rc;
  --inflight_;
  return ++completed_ == ops.size();
}

void AioBatch::finish() {
  if (on_done_) on_done_(*this);
  {
    std::lock_guard lk(m_);
    finished_ = true;
    cv_.notify_all();
  }
  if (tracker_) tracker_->end();
}

void AioBatch::wait() {
  std::unique_lock lk(m_);
  cv_.wait(lk, [&] { return finished_; });
}

int AioBatch::first_error(bool ignore_enoent) const {
  for (const ObjectOp &o : ops) {
    if (o.rc >= 0 || (ignore_enoent && o.rc == -ENOENT)) continue;
    return static_cast<int>(o.rc);
  }
  return 0;
}

}  // namespace strata::fuse
