// C API: write and read op builders and their synchronous operate.
#include <cstring>

#include "client/c_api_internal.h"

using namespace strata;
using namespace strata::client;
using namespace strata::client::capi;

namespace {

constexpr size_t kStatV1 = sizeof(strata_obj_stat);

std::string_view view(const void *p, size_t len) { return bytes_view(p, len); }

// Builder arguments that cannot be used become the op's error: operate
// reports it (the builder calls themselves return nothing, like librados).
bool usable_data(ObjectOperation &op, const void *buf, size_t len, const char *fn) {
  if (!buf && len) {
    op.set_error(Status::Error(EINVAL, std::string(fn) + ": NULL buffer with a length"));
    return false;
  }
  return true;
}

bool usable_name(ObjectOperation &op, const char *name, const char *fn) {
  if (!name) {
    op.set_error(Status::Error(EINVAL, std::string(fn) + ": NULL name"));
    return false;
  }
  return true;
}

// Guard steps read and write ops share: every step is recorded on the
// handle's ObjectOperation, and a bad argument becomes the op's error.
template <class Handle>
void assert_exists_step(Handle *op, const char *fn) {
  guard_void(fn, [&] {
    if (op) op->op.assert_exists();
  });
}

template <class Handle>
void assert_version_step(Handle *op, uint64_t version, const char *fn) {
  guard_void(fn, [&] {
    if (op) op->op.assert_version(version);
  });
}

template <class Handle>
void cmpxattr_step(Handle *op, const char *name, int cmp, const void *value, size_t len,
                   const char *fn) {
  guard_void(fn, [&] {
    if (!op || !usable_name(op->op, name, "cmpxattr") ||
        !usable_data(op->op, value, len, "cmpxattr"))
      return;
    CmpMode mode;
    if (!to_cmp_mode(cmp, &mode)) {
      op->op.set_error(
          Status::Error(EINVAL, "cmpxattr: unknown comparison " + std::to_string(cmp)));
      return;
    }
    op->op.cmpxattr(name, mode, view(value, len));
  });
}

}  // namespace

void strata::client::capi::patch_stat_versions(strata_read_op_t op, uint64_t version) {
  for (const auto &p : op->stats)
    if (p->ok) p->out->version = version;
}

extern "C" {

/* ---- write ops ---- */

strata_write_op_t strata_write_op_new(void) {
  return guard<strata_write_op_t>("strata_write_op_new", nullptr,
                                  [] { return new strata_write_op; });
}

void strata_write_op_release(strata_write_op_t op) {
  guard_void("strata_write_op_release", [&] { delete op; });
}

int strata_write_op_set_request_id(strata_write_op_t op, const char *id) {
  return guard("strata_write_op_set_request_id", -EIO, [&]() -> int {
    if (!op || !id) return set_error(-EINVAL, "strata_write_op_set_request_id: NULL argument");
    size_t n = std::strlen(id);
    if (n == 0 || n > strata::client::kMaxRequestId)
      return set_error(-EINVAL, "strata_write_op_set_request_id: the id must be 1.." +
                                    std::to_string(strata::client::kMaxRequestId) + " bytes");
    op->op.set_request_id(id);
    return 0;
  });
}

void strata_write_op_assert_exists(strata_write_op_t op) {
  assert_exists_step(op, "strata_write_op_assert_exists");
}

void strata_write_op_assert_version(strata_write_op_t op, uint64_t version) {
  assert_version_step(op, version, "strata_write_op_assert_version");
}

void strata_write_op_cmpxattr(strata_write_op_t op, const char *name, int cmp, const void *value,
                              size_t len) {
  cmpxattr_step(op, name, cmp, value, len, "strata_write_op_cmpxattr");
}

void strata_write_op_create(strata_write_op_t op, int exclusive) {
  guard_void("strata_write_op_create", [&] {
    if (op) op->op.create(exclusive != 0);
  });
}

void strata_write_op_write(strata_write_op_t op, const void *buf, size_t len, uint64_t off) {
  guard_void("strata_write_op_write", [&] {
    if (op && usable_data(op->op, buf, len, "write")) op->op.write(off, view(buf, len));
  });
}

void strata_write_op_write_full(strata_write_op_t op, const void *buf, size_t len) {
  guard_void("strata_write_op_write_full", [&] {
    if (op && usable_data(op->op, buf, len, "write_full")) op->op.write_full(view(buf, len));
  });
}

void strata_write_op_append(strata_write_op_t op, const void *buf, size_t len) {
  guard_void("strata_write_op_append", [&] {
    if (op && usable_data(op->op, buf, len, "append")) op->op.append(view(buf, len));
  });
}

void strata_write_op_truncate(strata_write_op_t op, uint64_t size) {
  guard_void("strata_write_op_truncate", [&] {
    if (op) op->op.truncate(size);
  });
}

void strata_write_op_zero(strata_write_op_t op, uint64_t off, uint64_t len) {
  guard_void("strata_write_op_zero", [&] {
    if (op) op->op.zero(off, len);
  });
}

void strata_write_op_remove(strata_write_op_t op) {
  guard_void("strata_write_op_remove", [&] {
    if (op) op->op.remove();
  });
}

void strata_write_op_snap_context(strata_write_op_t op, uint64_t seq) {
  guard_void("strata_write_op_snap_context", [&] {
    if (op && seq) op->op.snap_context(seq);
  });
}

void strata_write_op_snap_trim(strata_write_op_t op, const uint64_t *keep, size_t n) {
  guard_void("strata_write_op_snap_trim", [&] {
    if (!op) return;
    if (!keep && n) {
      op->op.set_error(Status::Error(EINVAL, "snap_trim: NULL ids with a count"));
      return;
    }
    op->op.snap_trim(std::vector<uint64_t>(keep, keep + n));
  });
}

void strata_write_op_snap_rollback(strata_write_op_t op, uint64_t snapid) {
  guard_void("strata_write_op_snap_rollback", [&] {
    if (op) op->op.snap_rollback(snapid);
  });
}

void strata_write_op_setxattr(strata_write_op_t op, const char *name, const void *value,
                              size_t len) {
  guard_void("strata_write_op_setxattr", [&] {
    if (op && usable_name(op->op, name, "setxattr") && usable_data(op->op, value, len, "setxattr"))
      op->op.setxattr(name, view(value, len));
  });
}

void strata_write_op_rmxattr(strata_write_op_t op, const char *name) {
  guard_void("strata_write_op_rmxattr", [&] {
    if (op && usable_name(op->op, name, "rmxattr")) op->op.rmxattr(name);
  });
}

void strata_write_op_omap_set(strata_write_op_t op, const strata_bytes *keys,
                              const strata_bytes *values, size_t n) {
  guard_void("strata_write_op_omap_set", [&] {
    if (!op) return;
    std::vector<std::string> k, v;
    if (!to_strings(keys, n, &k, "omap_set") || !to_strings(values, n, &v, "omap_set")) {
      op->op.set_error(Status::Error(EINVAL, strata_last_error()));
      return;
    }
    op->op.omap_set(std::move(k), std::move(v));
  });
}

void strata_write_op_omap_rm_keys(strata_write_op_t op, const strata_bytes *keys, size_t n) {
  guard_void("strata_write_op_omap_rm_keys", [&] {
    if (!op) return;
    std::vector<std::string> k;
    if (!to_strings(keys, n, &k, "omap_rm_keys")) {
      op->op.set_error(Status::Error(EINVAL, strata_last_error()));
      return;
    }
    op->op.omap_rm_keys(std::move(k));
  });
}

void strata_write_op_omap_rm_range(strata_write_op_t op, const void *first, size_t first_len,
                                   const void *end, size_t end_len) {
  guard_void("strata_write_op_omap_rm_range", [&] {
    if (op && usable_data(op->op, first, first_len, "omap_rm_range") &&
        usable_data(op->op, end, end_len, "omap_rm_range"))
      op->op.omap_rm_range(view(first, first_len), view(end, end_len));
  });
}

void strata_write_op_omap_clear(strata_write_op_t op) {
  guard_void("strata_write_op_omap_clear", [&] {
    if (op) op->op.omap_clear();
  });
}

void strata_write_op_omap_set_header(strata_write_op_t op, const void *buf, size_t len) {
  guard_void("strata_write_op_omap_set_header", [&] {
    if (op && usable_data(op->op, buf, len, "omap_set_header"))
      op->op.omap_set_header(view(buf, len));
  });
}

size_t strata_write_op_size(strata_write_op_t op) { return op ? op->op.size() : 0; }

int strata_write_op_operate(strata_write_op_t op, strata_ioctx_t io, const char *oid,
                            uint64_t *version) {
  return guard("strata_write_op_operate", -EIO, [&]() -> int {
    if (!op) return set_error(-EINVAL, "strata_write_op_operate: NULL op");
    if (int rc = check_io(io, oid, "strata_write_op_operate")) return rc;
    if (!op->op.error().ok()) return set_error(op->op.error());
    if (Status st = io->client->usable(); !st.ok()) return set_error(st);
    if (op->op.empty()) {
      if (version) *version = 0;
      return 0;
    }
    // The op outlives this call, so the request may borrow its data.
    return run_sync(io, oid, op->op.borrowing_copy(), "write op on", version);
  });
}

/* ---- read ops ---- */

strata_read_op_t strata_read_op_new(void) {
  return guard<strata_read_op_t>("strata_read_op_new", nullptr, [] { return new strata_read_op; });
}

void strata_read_op_release(strata_read_op_t op) {
  guard_void("strata_read_op_release", [&] { delete op; });
}

void strata_read_op_assert_exists(strata_read_op_t op) {
  assert_exists_step(op, "strata_read_op_assert_exists");
}

void strata_read_op_assert_version(strata_read_op_t op, uint64_t version) {
  assert_version_step(op, version, "strata_read_op_assert_version");
}

void strata_read_op_cmpxattr(strata_read_op_t op, const char *name, int cmp, const void *value,
                             size_t len) {
  cmpxattr_step(op, name, cmp, value, len, "strata_read_op_cmpxattr");
}

void strata_read_op_read(strata_read_op_t op, uint64_t off, size_t len, void *buf,
                         size_t *bytes_read, int *prval) {
  guard_void("strata_read_op_read", [&] {
    if (!op || !usable_data(op->op, buf, len, "read")) return;
    if (bytes_read) *bytes_read = 0;
    if (len == 0) {
      // On the wire length 0 reads to the end; here it reads nothing.
      op->op.stat([prval](const StepResult &r) {
        if (prval) *prval = r.rc;
      });
      return;
    }
    op->op.read(off, len, [buf, len, bytes_read, prval](const StepResult &r) {
      if (prval) *prval = r.rc;
      if (r.rc < 0) return;
      int64_t n = copy_out(r.data.substr(0, len), buf, len);
      if (bytes_read) *bytes_read = static_cast<size_t>(n);
    });
  });
}

void strata_read_op_stat(strata_read_op_t op, strata_obj_stat *out, int *prval) {
  guard_void("strata_read_op_stat", [&] {
    if (!op) return;
    if (!struct_ok(out, kStatV1)) {
      op->op.set_error(Status::Error(EINVAL, "stat: NULL out or struct_size too small"));
      return;
    }
    auto patch = std::make_shared<StrataStatPatch>();
    patch->out = out;
    op->stats.push_back(patch);
    op->op.stat([patch, prval](const StepResult &r) {
      if (prval) *prval = r.rc;
      patch->ok = r.rc >= 0;
      if (r.rc >= 0) fill_stat(r, 0, patch->out);
    });
  });
}

void strata_read_op_getxattr(strata_read_op_t op, const char *name, void *buf, size_t len,
                             size_t *value_len, int *prval) {
  guard_void("strata_read_op_getxattr", [&] {
    if (!op || !usable_name(op->op, name, "getxattr") || !usable_data(op->op, buf, len, "getxattr"))
      return;
    op->op.getxattr(name, [buf, len, value_len, prval](const StepResult &r) {
      if (prval) *prval = r.rc;
      if (r.rc < 0) return;
      int64_t n = copy_out(r.data, buf, len);
      if (value_len) *value_len = static_cast<size_t>(n);
    });
  });
}

void strata_read_op_getxattrs(strata_read_op_t op, strata_xattr_iter_t *iter, int *prval) {
  guard_void("strata_read_op_getxattrs", [&] {
    if (!op) return;
    if (iter) *iter = nullptr;
    op->op.getxattrs(xattrs_to_iter(iter, prval));
  });
}

void strata_read_op_omap_get_keys(strata_read_op_t op, const strata_bytes *keys, size_t n,
                                  strata_omap_iter_t *iter, int *prval) {
  guard_void("strata_read_op_omap_get_keys", [&] {
    if (!op) return;
    if (iter) *iter = nullptr;
    std::vector<std::string> k;
    if (!to_strings(keys, n, &k, "omap_get_keys")) {
      op->op.set_error(Status::Error(EINVAL, strata_last_error()));
      return;
    }
    op->op.omap_get_keys(std::move(k), omap_to_iter(iter, prval, true));
  });
}

void strata_read_op_omap_list(strata_read_op_t op, const void *start_after, size_t start_after_len,
                              const void *end, size_t end_len, uint32_t max,
                              strata_omap_iter_t *iter, int *prval) {
  guard_void("strata_read_op_omap_list", [&] {
    if (!op || !usable_data(op->op, start_after, start_after_len, "omap_list") ||
        !usable_data(op->op, end, end_len, "omap_list"))
      return;
    if (iter) *iter = nullptr;
    op->op.omap_list(view(start_after, start_after_len), view(end, end_len), max,
                     omap_to_iter(iter, prval));
  });
}

void strata_read_op_omap_get_header(strata_read_op_t op, void *buf, size_t len, size_t *header_len,
                                    int *prval) {
  guard_void("strata_read_op_omap_get_header", [&] {
    if (!op || !usable_data(op->op, buf, len, "omap_get_header")) return;
    op->op.omap_get_header([buf, len, header_len, prval](const StepResult &r) {
      if (prval) *prval = r.rc;
      if (r.rc < 0) return;
      int64_t n = copy_out(r.data, buf, len);
      if (header_len) *header_len = static_cast<size_t>(n);
    });
  });
}

void strata_read_op_set_snap(strata_read_op_t op, uint64_t snapid) {
  guard_void("strata_read_op_set_snap", [&] {
    if (op) op->op.set_snap(snapid);
  });
}

void strata_read_op_list_snaps(strata_read_op_t op, uint64_t *seq, strata_snap_clone *clones,
                               size_t max, size_t *n, int *prval) {
  guard_void("strata_read_op_list_snaps", [&] {
    if (!op) return;
    if (!clones && max) {
      op->op.set_error(Status::Error(EINVAL, "list_snaps: NULL clones with a count"));
      return;
    }
    op->op.list_snaps([seq, clones, max, n, prval](const StepResult &r) {
      if (prval) *prval = r.rc;
      if (r.rc < 0) return;
      if (seq) *seq = r.size;
      if (n) *n = r.keys.size();
      auto be64 = [](std::string_view b) {
        uint64_t v = 0;
        for (size_t i = 0; i < 8 && i < b.size(); ++i) v = v << 8 | static_cast<uint8_t>(b[i]);
        return v;
      };
      for (size_t i = 0; i < r.keys.size() && i < max && i < r.values.size(); ++i) {
        clones[i].id = be64(r.keys[i]);
        clones[i].size = be64(r.values[i]);
        clones[i].exists = r.values[i].size() > 8 && r.values[i][8] != 0;
      }
    });
  });
}

size_t strata_read_op_size(strata_read_op_t op) { return op ? op->op.size() : 0; }

int strata_read_op_operate(strata_read_op_t op, strata_ioctx_t io, const char *oid,
                           uint64_t *version) {
  return guard("strata_read_op_operate", -EIO, [&]() -> int {
    if (!op) return set_error(-EINVAL, "strata_read_op_operate: NULL op");
    if (int rc = check_io(io, oid, "strata_read_op_operate")) return rc;
    if (!op->op.error().ok()) return set_error(op->op.error());
    if (Status st = io->client->usable(); !st.ok()) return set_error(st);
    if (op->op.empty()) {
      if (version) *version = 0;
      return 0;
    }
    uint64_t v = 0;
    auto r = io->client->execute(io->pool, oid, op->op.borrowing_copy());
    if (!r.ok()) return set_error(r.status());
    v = r->version;
    patch_stat_versions(op, v);
    if (version) *version = v;
    if (r->rc < 0)
      return set_rc_error(
          r->rc, std::string("read op on ") + oid + " in pool " + std::to_string(io->pool));
    return 0;
  });
}

}  // extern "C"
