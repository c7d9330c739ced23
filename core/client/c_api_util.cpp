// Helpers shared by the C entry points (c_api_internal.h).
#include <algorithm>
#include <cstring>

#include "client/c_api_internal.h"

namespace strata::client::capi {

namespace {
// Like errno: one per thread, so concurrent callers never see each
// other's messages.
thread_local std::string tl_last_error;
}  // namespace

const char *tl_last_error_cstr() { return tl_last_error.c_str(); }

int set_error(int code, const std::string &msg) {
  try {
    tl_last_error = msg;
  } catch (...) {
    tl_last_error.clear();  // no memory for the message: the code still counts
  }
  return code < 0 ? code : -code;
}

int set_error(const Status &st) { return set_error(st.code() ? st.code() : -EIO, st.message()); }

int set_rc_error(int rc, const std::string &what) {
  return set_error(rc, what + ": " + std::strerror(-rc));
}

int64_t copy_out(std::string_view data, void *buf, size_t cap) {
  if (buf && cap) std::memcpy(buf, data.data(), std::min(cap, data.size()));
  return static_cast<int64_t>(data.size());
}

int64_t copy_text(std::string_view text, char *buf, size_t cap) {
  if (buf && cap) {
    size_t n = std::min(cap - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return static_cast<int64_t>(text.size());
}

int check_io(strata_ioctx_t io, const char *oid, const char *fn) {
  if (!io) return set_error(-EINVAL, std::string(fn) + ": NULL ioctx");
  if (!oid || !*oid) return set_error(-EINVAL, std::string(fn) + ": no object name");
  return 0;
}

int run_sync(strata_ioctx_t io, const char *oid, ObjectOperation op, const char *what,
             uint64_t *version) {
  auto r = io->client->execute(io->pool, oid, std::move(op));
  if (!r.ok()) return set_error(r.status());
  if (r->rc < 0)
    return set_rc_error(r->rc, std::string(what) + " " + oid + " in pool " +
                                   std::to_string(io->pool) +
                                   (r->message.empty() ? "" : " (" + r->message + ")"));
  if (version) *version = r->version;
  return 0;
}

bool to_strings(const strata_bytes *in, size_t n, std::vector<std::string> *out, const char *fn) {
  if (n && !in) {
    set_error(-EINVAL, std::string(fn) + ": NULL array with a non-zero count");
    return false;
  }
  out->clear();
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!in[i].data && in[i].len) {
      set_error(-EINVAL, std::string(fn) + ": entry " + std::to_string(i) +
                             " has no data but a length");
      return false;
    }
    out->emplace_back(bytes_view(in[i].data, in[i].len));
  }
  return true;
}

bool to_cmp_mode(int cmp, CmpMode *out) {
  switch (cmp) {
    case STRATA_CMP_EQ: *out = CmpMode::kEq; return true;
    case STRATA_CMP_NE: *out = CmpMode::kNe; return true;
    case STRATA_CMP_GT: *out = CmpMode::kGt; return true;
    case STRATA_CMP_GE: *out = CmpMode::kGe; return true;
    case STRATA_CMP_LT: *out = CmpMode::kLt; return true;
    case STRATA_CMP_LE: *out = CmpMode::kLe; return true;
    default: return false;
  }
}

StepHandler xattrs_to_iter(strata_xattr_iter_t *iter, int *prval) {
  return [iter, prval](const StepResult &r) {
    if (prval) *prval = r.rc;
    if (r.rc < 0 || !iter) return;
    auto *it = new (std::nothrow) strata_xattr_iter;
    if (!it) {
      if (prval) *prval = -ENOMEM;
      return;
    }
    size_t n = std::min(r.keys.size(), r.values.size());
    it->entries.reserve(n);
    for (size_t i = 0; i < n; ++i) it->entries.emplace_back(r.keys[i], r.values[i]);
    *iter = it;
  };
}

StepHandler omap_to_iter(strata_omap_iter_t *iter, int *prval, bool sort) {
  return [iter, prval, sort](const StepResult &r) {
    if (prval) *prval = r.rc;
    if (r.rc < 0 || !iter) return;
    auto *it = new (std::nothrow) strata_omap_iter;
    if (!it) {
      if (prval) *prval = -ENOMEM;
      return;
    }
    size_t n = std::min(r.keys.size(), r.values.size());
    it->entries.reserve(n);
    for (size_t i = 0; i < n; ++i) it->entries.emplace_back(r.keys[i], r.values[i]);
    if (sort) std::sort(it->entries.begin(), it->entries.end());
    it->more = r.more;
    *iter = it;
  };
}

void fill_stat(const StepResult &r, uint64_t version, strata_obj_stat *out) {
  // Only 1.0 fields so far; each later field gets an offsetof check.
  out->size = r.size;
  out->mtime_ns = r.mtime_ns;
  out->version = version;
}

void complete(strata_completion_t c, int64_t rv, uint64_t version) {
  {
    std::lock_guard<std::mutex> g(c->mu);
    c->rv = rv;
    c->version = version;
    c->complete = true;
  }
  if (c->cb) c->cb(c, c->arg);
  {
    std::lock_guard<std::mutex> g(c->mu);
    c->finished = true;
    c->cv.notify_all();
  }
  // The call's reference; the caller may have released theirs already.
  if (c->refs.fetch_sub(1) == 1) delete c;
}

bool claim(strata_completion_t c, const char *fn) {
  if (!c) {
    set_error(-EINVAL, std::string(fn) + ": NULL completion");
    return false;
  }
  if (c->used.exchange(true)) {
    set_error(-EBUSY, std::string(fn) + ": completion already used by another call");
    return false;
  }
  return true;
}

}  // namespace strata::client::capi

extern "C" const char *strata_last_error(void) {
  return strata::client::capi::tl_last_error_cstr();
}
