/*
 * A plugin whose every function is a trivial stub, so that the host accepts
 * its vtable; compiled several times (tests/abi/CMakeLists.txt) to make:
 *   PLUGIN_JOURNAL     defined: a journal plugin; else a backend
 *   PLUGIN_NAME        its name
 *   PLUGIN_NULL_SLOT   a vtable field left NULL: the host must refuse the
 *                      plugin at load, naming that field
 *   PLUGIN_CALLS_DEPENDENCY fsck() calls into a separate shared library
 *   PLUGIN_CRASH_USAGE the backend's usage() dies with SIGSEGV, as a buggy
 *                      plugin would: the conformance kit must report the cases
 *                      that call it as crashed and go on with the others
 * The stubs store nothing: a backend reads ENOENT everywhere.
 */
#include <errno.h>
#include <signal.h>

#include "strata/journal.h"
#include "strata/objectstore.h"

/* A macro of its own: the STRATA_KIND_* names are enum constants, which
 * #if cannot compare. */
#ifdef PLUGIN_JOURNAL
#define PLUGIN_KIND STRATA_KIND_JOURNAL
#else
#define PLUGIN_KIND STRATA_KIND_OBJECTSTORE
#endif

static int dummy_instance;

#ifdef PLUGIN_JOURNAL
static int j_create(const strata_open_args *a, uint64_t c, strata_err *e) {
  (void)a, (void)c, (void)e;
  return 0;
}
static int j_open(const strata_open_args *a, strata_journal **out, strata_err *e) {
  (void)a, (void)e;
  *out = (strata_journal *)&dummy_instance;
  return 0;
}
static void j_close(strata_journal *j) { (void)j; }
static uint64_t j_caps(strata_journal *j) {
  (void)j;
  return 0;
}
static int j_replay(strata_journal *j, uint64_t after, strata_journal_record_cb cb, void *ctx,
                    strata_journal_replay_result *r, strata_err *e) {
  (void)j, (void)cb, (void)ctx, (void)e;
  if (r) r->last_seq = after;
  return 0;
}
static int j_append(strata_journal *j, uint64_t seq, const void *d, size_t len,
                    strata_journal_done_cb cb, void *arg, strata_err *e) {
  (void)j, (void)seq, (void)d, (void)len, (void)e;
  cb(arg, 0);
  return 0;
}
static int j_trim(strata_journal *j, uint64_t upto, strata_err *e) {
  (void)j, (void)upto, (void)e;
  return 0;
}
static int j_flush(strata_journal *j, strata_err *e) {
  (void)j, (void)e;
  return 0;
}
static int j_stat(strata_journal *j, strata_journal_stat *out) {
  (void)j, (void)out;
  return 0;
}
static int j_destroy(const strata_open_args *a, strata_err *e) {
  (void)a, (void)e;
  return 0;
}
static strata_journal_ops kOps = {sizeof(strata_journal_ops), 0, j_create, j_open, j_close,
                                  j_caps, j_replay, j_append, j_trim, j_flush, j_stat, j_destroy,
                                  0};
#else
static int b_mkfs(const strata_open_args *a, strata_err *e) {
  (void)a, (void)e;
  return 0;
}
static int b_open(const strata_open_args *a, strata_objectstore **out, strata_err *e) {
  (void)a, (void)e;
  *out = (strata_objectstore *)&dummy_instance;
  return 0;
}
static void b_close(strata_objectstore *os) { (void)os; }
static uint64_t b_caps(strata_objectstore *os) {
  (void)os;
  return 0;
}
static int b_apply(strata_objectstore *os, const strata_txn *t, strata_err *e) {
  (void)os, (void)t, (void)e;
  return 0;
}
static int b_checkpoint(strata_objectstore *os, uint64_t seq, strata_err *e) {
  (void)os, (void)seq, (void)e;
  return 0;
}
static int b_committed(strata_objectstore *os, uint64_t *seq, strata_err *e) {
  (void)os, (void)e;
  *seq = 0;
  return 0;
}
static int64_t b_read(strata_objectstore *os, strata_slice c, strata_slice o, uint64_t off,
                      uint64_t len, void *buf, strata_err *e) {
  (void)os, (void)c, (void)o, (void)off, (void)len, (void)buf, (void)e;
  return -ENOENT;
}
static int b_stat(strata_objectstore *os, strata_slice c, strata_slice o, strata_object_stat *out,
                  strata_err *e) {
  (void)os, (void)c, (void)o, (void)out, (void)e;
  return -ENOENT;
}
static int64_t b_getxattr(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice n,
                          void *buf, size_t cap, strata_err *e) {
  (void)os, (void)c, (void)o, (void)n, (void)buf, (void)cap, (void)e;
  return -ENOENT;
}
static int b_getxattrs(strata_objectstore *os, strata_slice c, strata_slice o, strata_kv_cb cb,
                       void *ctx, strata_err *e) {
  (void)os, (void)c, (void)o, (void)cb, (void)ctx, (void)e;
  return -ENOENT;
}
static int64_t b_omap_header(strata_objectstore *os, strata_slice c, strata_slice o, void *buf,
                             size_t cap, strata_err *e) {
  (void)os, (void)c, (void)o, (void)buf, (void)cap, (void)e;
  return -ENOENT;
}
static int64_t b_omap_get(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice k,
                          void *buf, size_t cap, strata_err *e) {
  (void)os, (void)c, (void)o, (void)k, (void)buf, (void)cap, (void)e;
  return -ENOENT;
}
static int b_omap_iterate(strata_objectstore *os, strata_slice c, strata_slice o,
                          strata_slice after, strata_slice end, uint64_t limit, strata_kv_cb cb,
                          void *ctx, strata_err *e) {
  (void)os, (void)c, (void)o, (void)after, (void)end, (void)limit, (void)cb, (void)ctx, (void)e;
  return -ENOENT;
}
static int b_list_objects(strata_objectstore *os, strata_slice c, strata_slice after,
                          uint64_t limit, strata_name_cb cb, void *ctx, strata_err *e) {
  (void)os, (void)c, (void)after, (void)limit, (void)cb, (void)ctx, (void)e;
  return -ENOENT;
}
static int b_list_collections(strata_objectstore *os, strata_name_cb cb, void *ctx,
                              strata_err *e) {
  (void)os, (void)cb, (void)ctx, (void)e;
  return 0;
}
static int b_usage(strata_objectstore *os, strata_store_usage *out, strata_err *e) {
  (void)os, (void)e;
#ifdef PLUGIN_CRASH_USAGE
  raise(SIGSEGV);
#endif
  out->total_bytes = 1 << 20;
  out->used_bytes = 0;
  out->n_objects = 0;
  return 0;
}
#ifdef PLUGIN_CALLS_DEPENDENCY
int strata_abi_missing_dependency_answer(void);
#endif
static int64_t b_fsck(strata_objectstore *os, strata_err *e) {
  (void)os, (void)e;
#ifdef PLUGIN_CALLS_DEPENDENCY
  return strata_abi_missing_dependency_answer() == 42 ? 0 : 1;
#else
  return 0;
#endif
}
static strata_objectstore_ops kOps = {
    offsetof(strata_objectstore_ops, stage_write), 0, b_mkfs, b_open, b_close, b_caps,
    b_apply, b_checkpoint, b_committed, b_read, b_stat, b_getxattr, b_getxattrs,
    b_omap_header, b_omap_get, b_omap_iterate, b_list_objects, b_list_collections, b_usage,
    b_fsck, 0, 0, 0, 0};
#endif

static const strata_plugin_descriptor kDescriptor = {
    sizeof(strata_plugin_descriptor),
    STRATA_ABI_MAJOR,
    STRATA_ABI_MINOR,
    PLUGIN_KIND,
    0,
    PLUGIN_NAME,
    "0.0.1",
    "a stub plugin for the ABI and conformance kit tests",
    &kOps,
    0,
    0,
    {0}};

STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *strata_plugin_entry_v1(void) {
#ifdef PLUGIN_NULL_SLOT
  kOps.PLUGIN_NULL_SLOT = 0;
#endif
  return &kDescriptor;
}
