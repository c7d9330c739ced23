// What the C handles of strata/client.h are, and the helpers every C entry
// point uses: argument checks, the per-thread error message, and the guard
// that keeps C++ exceptions from crossing into C.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "client/cluster_client.h"
#include "client/object_lister.h"
#include "client/object_operation.h"
#include "strata/client.h"

// Pending asynchronous calls of one ioctx, for strata_aio_flush. Shared
// with the calls themselves, so it outlives an ioctx destroyed early.
struct StrataAioTracker {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t pending = 0;
  void add() {
    std::lock_guard<std::mutex> g(mu);
    ++pending;
  }
  void done() {
    std::lock_guard<std::mutex> g(mu);
    if (--pending == 0) cv.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return pending == 0; });
  }
};

struct strata_cluster {
  std::shared_ptr<strata::client::ClusterClient> client;
};

struct strata_ioctx {
  std::shared_ptr<strata::client::ClusterClient> client;
  uint32_t pool = 0;
  std::shared_ptr<StrataAioTracker> aio = std::make_shared<StrataAioTracker>();
};

// Reference counted: the caller's reference (released by
// strata_completion_release) and the in-flight call's.
struct strata_completion {
  strata_callback_t cb = nullptr;
  void *arg = nullptr;
  std::atomic<int> refs{1};
  std::atomic<bool> used{false};
  std::mutex mu;
  std::condition_variable cv;
  bool complete = false;  // result available
  bool finished = false;  // callback returned
  int64_t rv = 0;
  uint64_t version = 0;
};

struct strata_write_op {
  strata::client::ObjectOperation op;
};

// A stat step of a read op learns the object's version only from the whole
// reply, after the step handlers ran: patched in afterwards.
struct StrataStatPatch {
  strata_obj_stat *out = nullptr;
  bool ok = false;
};

struct strata_read_op {
  strata::client::ObjectOperation op;
  std::vector<std::shared_ptr<StrataStatPatch>> stats;
};

struct strata_xattr_iter {
  std::vector<std::pair<std::string, std::string>> entries;
  size_t pos = 0;
};

struct strata_omap_iter {
  std::vector<std::pair<std::string, std::string>> entries;
  size_t pos = 0;
  bool more = false;
};

struct strata_list {
  std::shared_ptr<strata::client::ClusterClient> client;
  strata::client::ObjectLister lister;
  std::string current;
  strata_list(std::shared_ptr<strata::client::ClusterClient> c, uint32_t pool,
              strata::client::ListCursor start)
      : client(std::move(c)), lister(*client, pool, std::move(start)) {}
};

namespace strata::client::capi {

// This thread's last error message (strata_last_error).
const char *tl_last_error_cstr();
// Records msg as this thread's last error and returns code (negative).
int set_error(int code, const std::string &msg);
int set_error(const Status &st);
// For outcomes: the errno with "what: strerror" as the message.
int set_rc_error(int rc, const std::string &what);

// Runs f, turning any exception into -ENOMEM / -EIO and a message.
template <class R, class F>
R guard(const char *fn, R on_exception, F &&f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    set_error(-ENOMEM, std::string(fn) + ": out of memory");
  } catch (const std::exception &e) {
    set_error(-EIO, std::string(fn) + ": internal error: " + e.what());
  } catch (...) {
    set_error(-EIO, std::string(fn) + ": internal error");
  }
  return on_exception;
}

template <class F>
void guard_void(const char *fn, F &&f) noexcept {
  guard<int>(fn, 0, [&] {
    f();
    return 0;
  });
}

// struct_size of a caller struct covers at least the 1.0 layout.
template <class S>
bool struct_ok(const S *s, size_t v1_size) {
  return s && s->struct_size >= v1_size;
}

// Copies [data, data+len) into a caller buffer of `cap` bytes, returns len
// (the snprintf contract of the header).
int64_t copy_out(std::string_view data, void *buf, size_t cap);
// Same for text: NUL-terminated when cap > 0.
int64_t copy_text(std::string_view text, char *buf, size_t cap);

// Runs op synchronously on io's pool; rc < 0 is recorded with `what`.
int run_sync(strata_ioctx_t io, const char *oid, ObjectOperation op, const char *what,
             uint64_t *version = nullptr);

// Checks an ioctx and object name; returns 0 or the error (recorded).
int check_io(strata_ioctx_t io, const char *oid, const char *fn);

// Builds byte strings from a C array; false (and an error) on a NULL
// entry with a non-zero length.
bool to_strings(const strata_bytes *in, size_t n, std::vector<std::string> *out, const char *fn);
inline std::string_view bytes_view(const void *p, size_t len) {
  return p ? std::string_view(static_cast<const char *>(p), len) : std::string_view();
}

// Mirrors strata_cmp_op onto the wire's mode; false for an unknown value.
bool to_cmp_mode(int cmp, CmpMode *out);

// Step handlers shared by the synchronous calls and the read op.
StepHandler xattrs_to_iter(strata_xattr_iter_t *iter, int *prval);
// sort: order the entries by key (get-by-keys answers in request order).
StepHandler omap_to_iter(strata_omap_iter_t *iter, int *prval, bool sort = false);
// Writes a stat result into a caller struct (sized by struct_size).
void fill_stat(const StepResult &r, uint64_t version, strata_obj_stat *out);

// Sets the version of every successful stat step of op.
void patch_stat_versions(strata_read_op_t op, uint64_t version);

// The completion's call finished: result, callback, waiters, reference.
void complete(strata_completion_t c, int64_t rv, uint64_t version);
// Marks c used for one call; false (-EBUSY recorded) if it already was.
bool claim(strata_completion_t c, const char *fn);

}  // namespace strata::client::capi
