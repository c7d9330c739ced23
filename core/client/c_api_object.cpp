// C API: synchronous object I/O, xattrs, omap, iterators, pool listing.
// Each call builds an ObjectOperation borrowing the caller's buffers (they
// outlive the call, which waits for completion) and runs it.
#include "client/c_api_internal.h"

using namespace strata;
using namespace strata::client;
using namespace strata::client::capi;

namespace {

constexpr size_t kStatV1 = sizeof(strata_obj_stat);

ObjectOperation borrowing_op() {
  ObjectOperation op;
  op.borrow_data(true);
  return op;
}

int check_data(const void *buf, size_t len, const char *fn) {
  if (!buf && len) return set_error(-EINVAL, std::string(fn) + ": NULL buffer with a length");
  return 0;
}

std::string_view view(const void *p, size_t len) { return bytes_view(p, len); }

}  // namespace

extern "C" {

int strata_write(strata_ioctx_t io, const char *oid, const void *buf, size_t len, uint64_t off) {
  return guard("strata_write", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_write")) return rc;
    if (int rc = check_data(buf, len, "strata_write")) return rc;
    ObjectOperation op = borrowing_op();
    op.write(off, view(buf, len));
    return run_sync(io, oid, std::move(op), "write");
  });
}

int strata_write_full(strata_ioctx_t io, const char *oid, const void *buf, size_t len) {
  return guard("strata_write_full", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_write_full")) return rc;
    if (int rc = check_data(buf, len, "strata_write_full")) return rc;
    ObjectOperation op = borrowing_op();
    op.write_full(view(buf, len));
    return run_sync(io, oid, std::move(op), "write_full");
  });
}

int strata_append(strata_ioctx_t io, const char *oid, const void *buf, size_t len) {
  return guard("strata_append", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_append")) return rc;
    if (int rc = check_data(buf, len, "strata_append")) return rc;
    ObjectOperation op = borrowing_op();
    op.append(view(buf, len));
    return run_sync(io, oid, std::move(op), "append");
  });
}

int64_t strata_read(strata_ioctx_t io, const char *oid, void *buf, size_t len, uint64_t off) {
  return guard<int64_t>("strata_read", -EIO, [&]() -> int64_t {
    if (int rc = check_io(io, oid, "strata_read")) return rc;
    if (int rc = check_data(buf, len, "strata_read")) return rc;
    int64_t got = 0;
    ObjectOperation op;
    if (len == 0) {
      // The wire's length 0 means "to the end"; the C call reads nothing,
      // but still reports a missing object.
      op.stat(nullptr);
      int rc = run_sync(io, oid, std::move(op), "read");
      return rc < 0 ? rc : 0;
    }
    op.read(off, len, [&](const StepResult &r) {
      if (r.rc >= 0) got = copy_out(r.data.substr(0, len), buf, len);
    });
    int rc = run_sync(io, oid, std::move(op), "read");
    return rc < 0 ? rc : got;
  });
}

int strata_stat(strata_ioctx_t io, const char *oid, strata_obj_stat *out) {
  return guard("strata_stat", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_stat")) return rc;
    if (!struct_ok(out, kStatV1))
      return set_error(-EINVAL, "strata_stat: NULL out or struct_size too small");
    StepResult got;
    ObjectOperation op;
    op.stat([&](const StepResult &r) {
      got.rc = r.rc;
      got.size = r.size;
      got.mtime_ns = r.mtime_ns;
    });
    uint64_t version = 0;
    int rc = run_sync(io, oid, std::move(op), "stat", &version);
    if (rc < 0) return rc;
    fill_stat(got, version, out);
    return 0;
  });
}

int strata_remove(strata_ioctx_t io, const char *oid) {
  return guard("strata_remove", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_remove")) return rc;
    ObjectOperation op;
    op.remove();  // -ENOENT from the OSD when there is no object
    return run_sync(io, oid, std::move(op), "remove");
  });
}

int strata_truncate(strata_ioctx_t io, const char *oid, uint64_t size) {
  return guard("strata_truncate", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_truncate")) return rc;
    ObjectOperation op;
    op.truncate(size);
    return run_sync(io, oid, std::move(op), "truncate");
  });
}

int strata_zero(strata_ioctx_t io, const char *oid, uint64_t off, uint64_t len) {
  return guard("strata_zero", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_zero")) return rc;
    ObjectOperation op;
    op.zero(off, len);
    return run_sync(io, oid, std::move(op), "zero");
  });
}

int strata_create(strata_ioctx_t io, const char *oid, int exclusive) {
  return guard("strata_create", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_create")) return rc;
    ObjectOperation op;
    op.create(exclusive != 0);
    return run_sync(io, oid, std::move(op), "create");
  });
}

/* ---- xattrs ---- */

int64_t strata_getxattr(strata_ioctx_t io, const char *oid, const char *name, void *buf,
                        size_t len) {
  return guard<int64_t>("strata_getxattr", -EIO, [&]() -> int64_t {
    if (int rc = check_io(io, oid, "strata_getxattr")) return rc;
    if (!name) return set_error(-EINVAL, "strata_getxattr: NULL name");
    if (int rc = check_data(buf, len, "strata_getxattr")) return rc;
    int64_t full = 0;
    ObjectOperation op;
    op.getxattr(name, [&](const StepResult &r) {
      if (r.rc >= 0) full = copy_out(r.data, buf, len);
    });
    int rc = run_sync(io, oid, std::move(op), (std::string("getxattr ") + name + " of").c_str());
    return rc < 0 ? rc : full;
  });
}

int strata_setxattr(strata_ioctx_t io, const char *oid, const char *name, const void *value,
                    size_t len) {
  return guard("strata_setxattr", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_setxattr")) return rc;
    if (!name) return set_error(-EINVAL, "strata_setxattr: NULL name");
    if (int rc = check_data(value, len, "strata_setxattr")) return rc;
    ObjectOperation op = borrowing_op();
    op.setxattr(name, view(value, len));
    return run_sync(io, oid, std::move(op), "setxattr");
  });
}

int strata_rmxattr(strata_ioctx_t io, const char *oid, const char *name) {
  return guard("strata_rmxattr", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_rmxattr")) return rc;
    if (!name) return set_error(-EINVAL, "strata_rmxattr: NULL name");
    ObjectOperation op;
    op.rmxattr(name);
    return run_sync(io, oid, std::move(op), "rmxattr");
  });
}

int strata_getxattrs(strata_ioctx_t io, const char *oid, strata_xattr_iter_t *iter) {
  return guard("strata_getxattrs", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_getxattrs")) return rc;
    if (!iter) return set_error(-EINVAL, "strata_getxattrs: NULL iter");
    *iter = nullptr;
    int prval = 0;
    ObjectOperation op;
    op.getxattrs(xattrs_to_iter(iter, &prval));
    int rc = run_sync(io, oid, std::move(op), "getxattrs");
    if (rc < 0) return rc;
    if (prval < 0) return set_rc_error(prval, std::string("getxattrs ") + oid);
    return 0;
  });
}

int strata_xattr_iter_next(strata_xattr_iter_t iter, const char **name, const void **value,
                           size_t *len) {
  if (!iter) return set_error(-EINVAL, "strata_xattr_iter_next: NULL iterator");
  if (iter->pos >= iter->entries.size()) return 0;
  const auto &e = iter->entries[iter->pos++];
  if (name) *name = e.first.c_str();
  if (value) *value = e.second.data();
  if (len) *len = e.second.size();
  return 1;
}

void strata_xattr_iter_end(strata_xattr_iter_t iter) { delete iter; }

/* ---- omap ---- */

int strata_omap_get_keys(strata_ioctx_t io, const char *oid, const strata_bytes *keys, size_t n,
                         strata_omap_iter_t *iter) {
  return guard("strata_omap_get_keys", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_get_keys")) return rc;
    if (!iter) return set_error(-EINVAL, "strata_omap_get_keys: NULL iter");
    *iter = nullptr;
    std::vector<std::string> k;
    if (!to_strings(keys, n, &k, "strata_omap_get_keys")) return -EINVAL;
    int prval = 0;
    ObjectOperation op;
    op.omap_get_keys(std::move(k), omap_to_iter(iter, &prval, true));
    int rc = run_sync(io, oid, std::move(op), "omap_get_keys");
    if (rc < 0) return rc;
    if (prval < 0) return set_rc_error(prval, std::string("omap_get_keys ") + oid);
    return 0;
  });
}

int strata_omap_list(strata_ioctx_t io, const char *oid, const void *start_after,
                     size_t start_after_len, const void *end, size_t end_len, uint32_t max,
                     strata_omap_iter_t *iter) {
  return guard("strata_omap_list", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_list")) return rc;
    if (!iter) return set_error(-EINVAL, "strata_omap_list: NULL iter");
    *iter = nullptr;
    if (int rc = check_data(start_after, start_after_len, "strata_omap_list")) return rc;
    if (int rc = check_data(end, end_len, "strata_omap_list")) return rc;
    int prval = 0;
    ObjectOperation op;
    op.omap_list(view(start_after, start_after_len), view(end, end_len), max,
                 omap_to_iter(iter, &prval));
    int rc = run_sync(io, oid, std::move(op), "omap_list");
    if (rc < 0) return rc;
    if (prval < 0) return set_rc_error(prval, std::string("omap_list ") + oid);
    return 0;
  });
}

int strata_omap_iter_next(strata_omap_iter_t iter, const void **key, size_t *key_len,
                          const void **value, size_t *value_len) {
  if (!iter) return set_error(-EINVAL, "strata_omap_iter_next: NULL iterator");
  if (iter->pos >= iter->entries.size()) return 0;
  const auto &e = iter->entries[iter->pos++];
  if (key) *key = e.first.data();
  if (key_len) *key_len = e.first.size();
  if (value) *value = e.second.data();
  if (value_len) *value_len = e.second.size();
  return 1;
}

size_t strata_omap_iter_size(strata_omap_iter_t iter) { return iter ? iter->entries.size() : 0; }

int strata_omap_iter_more(strata_omap_iter_t iter) { return iter && iter->more ? 1 : 0; }

void strata_omap_iter_end(strata_omap_iter_t iter) { delete iter; }

int strata_omap_set(strata_ioctx_t io, const char *oid, const strata_bytes *keys,
                    const strata_bytes *values, size_t n) {
  return guard("strata_omap_set", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_set")) return rc;
    std::vector<std::string> k, v;
    if (!to_strings(keys, n, &k, "strata_omap_set") ||
        !to_strings(values, n, &v, "strata_omap_set"))
      return -EINVAL;
    ObjectOperation op;
    op.omap_set(std::move(k), std::move(v));
    return run_sync(io, oid, std::move(op), "omap_set");
  });
}

int strata_omap_rm_keys(strata_ioctx_t io, const char *oid, const strata_bytes *keys, size_t n) {
  return guard("strata_omap_rm_keys", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_rm_keys")) return rc;
    std::vector<std::string> k;
    if (!to_strings(keys, n, &k, "strata_omap_rm_keys")) return -EINVAL;
    ObjectOperation op;
    op.omap_rm_keys(std::move(k));
    return run_sync(io, oid, std::move(op), "omap_rm_keys");
  });
}

int strata_omap_rm_range(strata_ioctx_t io, const char *oid, const void *first, size_t first_len,
                         const void *end, size_t end_len) {
  return guard("strata_omap_rm_range", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_rm_range")) return rc;
    if (int rc = check_data(first, first_len, "strata_omap_rm_range")) return rc;
    if (int rc = check_data(end, end_len, "strata_omap_rm_range")) return rc;
    ObjectOperation op;
    op.omap_rm_range(view(first, first_len), view(end, end_len));
    return run_sync(io, oid, std::move(op), "omap_rm_range");
  });
}

int strata_omap_clear(strata_ioctx_t io, const char *oid) {
  return guard("strata_omap_clear", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_clear")) return rc;
    ObjectOperation op;
    op.omap_clear();
    return run_sync(io, oid, std::move(op), "omap_clear");
  });
}

int64_t strata_omap_get_header(strata_ioctx_t io, const char *oid, void *buf, size_t len) {
  return guard<int64_t>("strata_omap_get_header", -EIO, [&]() -> int64_t {
    if (int rc = check_io(io, oid, "strata_omap_get_header")) return rc;
    if (int rc = check_data(buf, len, "strata_omap_get_header")) return rc;
    int64_t full = 0;
    ObjectOperation op;
    op.omap_get_header([&](const StepResult &r) {
      if (r.rc >= 0) full = copy_out(r.data, buf, len);
    });
    int rc = run_sync(io, oid, std::move(op), "omap_get_header");
    return rc < 0 ? rc : full;
  });
}

int strata_omap_set_header(strata_ioctx_t io, const char *oid, const void *buf, size_t len) {
  return guard("strata_omap_set_header", -EIO, [&]() -> int {
    if (int rc = check_io(io, oid, "strata_omap_set_header")) return rc;
    if (int rc = check_data(buf, len, "strata_omap_set_header")) return rc;
    ObjectOperation op = borrowing_op();
    op.omap_set_header(view(buf, len));
    return run_sync(io, oid, std::move(op), "omap_set_header");
  });
}

/* ---- listing ---- */

int strata_list_open(strata_ioctx_t io, const char *cursor, strata_list_t *out) {
  return guard("strata_list_open", -ENOMEM, [&]() -> int {
    if (!io) return set_error(-EINVAL, "strata_list_open: NULL ioctx");
    if (!out) return set_error(-EINVAL, "strata_list_open: NULL out");
    *out = nullptr;
    if (Status st = io->client->usable(); !st.ok()) return set_error(st);
    auto c = parse_list_cursor(cursor ? cursor : "");
    if (!c.ok()) return set_error(c.status());
    *out = new strata_list(io->client, io->pool, std::move(*c));
    return 0;
  });
}

int strata_list_next(strata_list_t l, const char **oid, size_t *len) {
  return guard("strata_list_next", -EIO, [&]() -> int {
    if (!l) return set_error(-EINVAL, "strata_list_next: NULL listing");
    std::string name;
    auto r = l->lister.next(&name);
    if (!r.ok()) return set_error(r.status());
    if (!*r) return 0;
    l->current = std::move(name);
    if (oid) *oid = l->current.c_str();
    if (len) *len = l->current.size();
    return 1;
  });
}

int64_t strata_list_cursor(strata_list_t l, char *buf, size_t len) {
  return guard<int64_t>("strata_list_cursor", -EIO, [&]() -> int64_t {
    if (!l) return set_error(-EINVAL, "strata_list_cursor: NULL listing");
    return copy_text(format_list_cursor(l->lister.cursor()), buf, len);
  });
}

void strata_list_close(strata_list_t l) {
  guard_void("strata_list_close", [&] { delete l; });
}

}  // extern "C"
