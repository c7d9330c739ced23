// C API: completions and asynchronous calls. A call takes a reference on
// its completion and drops it after the callback returned, so the caller
// may release the completion at any time (even inside the callback).
#include "client/c_api_internal.h"

using namespace strata;
using namespace strata::client;
using namespace strata::client::capi;

namespace {

using ResultFn = std::function<int64_t(const OpOutcome &)>;

int64_t plain_rc(const OpOutcome &o) { return o.rc; }

// Starts op for completion c; `result` turns the outcome into the value
// strata_completion_get_return_value reports.
int submit_aio(strata_ioctx_t io, const char *oid, strata_completion_t c, ObjectOperation op,
               const char *fn, ResultFn result = plain_rc) {
  if (int rc = check_io(io, oid, fn)) return rc;
  if (!claim(c, fn)) return c ? -EBUSY : -EINVAL;
  auto unclaim = [&](int rc) {
    c->used = false;  // not started: the completion may be used again
    return rc;
  };
  if (Status st = io->client->usable(); !st.ok()) return unclaim(set_error(st));
  Objecter *objecter = io->client->objecter();
  c->refs.fetch_add(1);
  std::shared_ptr<StrataAioTracker> tracker = io->aio;
  tracker->add();
  Status st = objecter->submit(io->pool, oid, std::move(op),
                               [c, tracker, result = std::move(result)](const OpOutcome &o) {
                                 complete(c, result(o), o.version);
                                 tracker->done();
                               });
  if (!st.ok()) {
    c->refs.fetch_sub(1);
    tracker->done();
    return unclaim(set_error(st));
  }
  return 0;
}

int check_data(const void *buf, size_t len, const char *fn) {
  if (!buf && len) return set_error(-EINVAL, std::string(fn) + ": NULL buffer with a length");
  return 0;
}

std::string_view view(const void *p, size_t len) { return bytes_view(p, len); }

}  // namespace

extern "C" {

int strata_completion_create(strata_callback_t cb, void *arg, strata_completion_t *out) {
  return guard("strata_completion_create", -ENOMEM, [&]() -> int {
    if (!out) return set_error(-EINVAL, "strata_completion_create: NULL out");
    *out = new strata_completion;
    (*out)->cb = cb;
    (*out)->arg = arg;
    return 0;
  });
}

int64_t strata_completion_wait(strata_completion_t c) {
  return guard<int64_t>("strata_completion_wait", -EIO, [&]() -> int64_t {
    if (!c) return set_error(-EINVAL, "strata_completion_wait: NULL completion");
    if (!c->used) return set_error(-EINVAL, "strata_completion_wait: completion not started");
    std::unique_lock<std::mutex> lk(c->mu);
    if (!c->finished && in_completion_callback())
      return set_error(-EDEADLK, "strata_completion_wait: called from a completion callback");
    c->cv.wait(lk, [&] { return c->finished; });
    return c->rv;
  });
}

int strata_completion_is_complete(strata_completion_t c) {
  if (!c) return 0;
  std::lock_guard<std::mutex> g(c->mu);
  return c->complete ? 1 : 0;
}

int64_t strata_completion_get_return_value(strata_completion_t c) {
  if (!c) return -EINVAL;
  std::lock_guard<std::mutex> g(c->mu);
  return c->rv;
}

uint64_t strata_completion_get_version(strata_completion_t c) {
  if (!c) return 0;
  std::lock_guard<std::mutex> g(c->mu);
  return c->version;
}

void strata_completion_release(strata_completion_t c) {
  if (c && c->refs.fetch_sub(1) == 1) delete c;
}

int strata_aio_write(strata_ioctx_t io, const char *oid, strata_completion_t c, const void *buf,
                     size_t len, uint64_t off) {
  return guard("strata_aio_write", -EIO, [&]() -> int {
    if (int rc = check_data(buf, len, "strata_aio_write")) return rc;
    ObjectOperation op;  // copies: the caller may reuse buf at once
    op.write(off, view(buf, len));
    return submit_aio(io, oid, c, std::move(op), "strata_aio_write");
  });
}

int strata_aio_write_full(strata_ioctx_t io, const char *oid, strata_completion_t c,
                          const void *buf, size_t len) {
  return guard("strata_aio_write_full", -EIO, [&]() -> int {
    if (int rc = check_data(buf, len, "strata_aio_write_full")) return rc;
    ObjectOperation op;
    op.write_full(view(buf, len));
    return submit_aio(io, oid, c, std::move(op), "strata_aio_write_full");
  });
}

int strata_aio_append(strata_ioctx_t io, const char *oid, strata_completion_t c, const void *buf,
                      size_t len) {
  return guard("strata_aio_append", -EIO, [&]() -> int {
    if (int rc = check_data(buf, len, "strata_aio_append")) return rc;
    ObjectOperation op;
    op.append(view(buf, len));
    return submit_aio(io, oid, c, std::move(op), "strata_aio_append");
  });
}

int strata_aio_read(strata_ioctx_t io, const char *oid, strata_completion_t c, void *buf,
                    size_t len, uint64_t off) {
  return guard("strata_aio_read", -EIO, [&]() -> int {
    if (int rc = check_data(buf, len, "strata_aio_read")) return rc;
    auto got = std::make_shared<int64_t>(0);
    ObjectOperation op;
    if (len == 0) {
      op.stat(nullptr);  // reads nothing, like strata_read with len 0
      return submit_aio(io, oid, c, std::move(op), "strata_aio_read");
    }
    op.read(off, len, [got, buf, len](const StepResult &r) {
      if (r.rc >= 0) *got = copy_out(r.data.substr(0, len), buf, len);
    });
    return submit_aio(io, oid, c, std::move(op), "strata_aio_read",
                      [got](const OpOutcome &o) -> int64_t { return o.rc < 0 ? o.rc : *got; });
  });
}

int strata_aio_stat(strata_ioctx_t io, const char *oid, strata_completion_t c,
                    strata_obj_stat *out) {
  return guard("strata_aio_stat", -EIO, [&]() -> int {
    if (!struct_ok(out, sizeof(strata_obj_stat)))
      return set_error(-EINVAL, "strata_aio_stat: NULL out or struct_size too small");
    auto got = std::make_shared<StepResult>();
    ObjectOperation op;
    op.stat([got](const StepResult &r) {
      got->rc = r.rc;
      got->size = r.size;
      got->mtime_ns = r.mtime_ns;
    });
    return submit_aio(io, oid, c, std::move(op), "strata_aio_stat",
                      [got, out](const OpOutcome &o) -> int64_t {
                        if (o.rc >= 0) fill_stat(*got, o.version, out);
                        return o.rc;
                      });
  });
}

int strata_aio_remove(strata_ioctx_t io, const char *oid, strata_completion_t c) {
  return guard("strata_aio_remove", -EIO, [&]() -> int {
    ObjectOperation op;
    op.remove();
    return submit_aio(io, oid, c, std::move(op), "strata_aio_remove");
  });
}

int strata_aio_write_op_operate(strata_write_op_t op, strata_ioctx_t io, const char *oid,
                                strata_completion_t c) {
  return guard("strata_aio_write_op_operate", -EIO, [&]() -> int {
    if (!op) return set_error(-EINVAL, "strata_aio_write_op_operate: NULL op");
    if (!op->op.error().ok()) return set_error(op->op.error());
    if (op->op.empty())
      return set_error(-EINVAL, "strata_aio_write_op_operate: the op has no steps");
    // A copy that owns its data: the op may be released once this returns.
    return submit_aio(io, oid, c, op->op, "strata_aio_write_op_operate");
  });
}

int strata_aio_read_op_operate(strata_read_op_t op, strata_ioctx_t io, const char *oid,
                               strata_completion_t c) {
  return guard("strata_aio_read_op_operate", -EIO, [&]() -> int {
    if (!op) return set_error(-EINVAL, "strata_aio_read_op_operate: NULL op");
    if (!op->op.error().ok()) return set_error(op->op.error());
    if (op->op.empty())
      return set_error(-EINVAL, "strata_aio_read_op_operate: the op has no steps");
    // The op lives until completion (the header's contract): borrow.
    return submit_aio(io, oid, c, op->op.borrowing_copy(), "strata_aio_read_op_operate",
                      [op](const OpOutcome &o) -> int64_t {
                        patch_stat_versions(op, o.version);
                        return o.rc;
                      });
  });
}

int strata_aio_flush(strata_ioctx_t io) {
  return guard("strata_aio_flush", -EIO, [&]() -> int {
    if (!io) return set_error(-EINVAL, "strata_aio_flush: NULL ioctx");
    if (in_completion_callback())
      return set_error(-EDEADLK, "strata_aio_flush: called from a completion callback");
    io->aio->wait();
    return 0;
  });
}

}  // extern "C"
