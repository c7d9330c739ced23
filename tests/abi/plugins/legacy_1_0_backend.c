/*
 * An object-store plugin as it was written for ABI 1.0: plain C, compiled
 * against the frozen 1.0 headers in tests/abi/frozen_1_0 (never the current
 * SDK). Its vtable ends after fsck, so a 1.1 host must treat the staged-write
 * functions as absent. Just enough of a store for the test to apply a
 * transaction and read it back: one collection table, objects with data.
 * Compiled a second time against tests/abi/frozen_1_2 (PLUGIN_NAME
 * "legacy12"): a plugin of 1.2, without the control slot, whose
 * list_collections returns 0 when its visitor stops it, as before 1.3.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/objectstore.h"

#define MAX_OBJECTS 16

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "legacy10"
#endif

struct object {
  char name[64];
  size_t name_len;
  char *data;
  size_t size;
};

struct strata_objectstore {
  struct object objects[MAX_OBJECTS];
  size_t n_objects;
};

static void fail(strata_err *err, const char *msg) {
  if (err) snprintf(err->msg, sizeof err->msg, "%s", msg);
}

static struct object *find(strata_objectstore *os, strata_slice oid) {
  for (size_t i = 0; i < os->n_objects; ++i)
    if (os->objects[i].name_len == oid.len && memcmp(os->objects[i].name, oid.data, oid.len) == 0)
      return &os->objects[i];
  return NULL;
}

static int lg_mkfs(const strata_open_args *args, strata_err *err) {
  (void)args;
  (void)err;
  return 0;
}

static int lg_open(const strata_open_args *args, strata_objectstore **out, strata_err *err) {
  (void)args;
  *out = calloc(1, sizeof **out);
  if (!*out) {
    fail(err, "out of memory");
    return -ENOMEM;
  }
  return 0;
}

static void lg_close(strata_objectstore *os) {
  if (!os) return;
  for (size_t i = 0; i < os->n_objects; ++i) free(os->objects[i].data);
  free(os);
}

static uint64_t lg_capabilities(strata_objectstore *os) {
  (void)os;
  return 0;
}

static int lg_write(strata_objectstore *os, const strata_op *op, strata_err *err) {
  struct object *o = find(os, op->object);
  if (!o) {
    if (os->n_objects == MAX_OBJECTS || op->object.len > sizeof o->name) {
      fail(err, "legacy store is full");
      return -ENOSPC;
    }
    o = &os->objects[os->n_objects++];
    memcpy(o->name, op->object.data, op->object.len);
    o->name_len = op->object.len;
  }
  size_t end = op->offset + op->value.len;
  if (end > o->size) {
    char *grown = realloc(o->data, end);
    if (!grown) {
      fail(err, "out of memory");
      return -ENOMEM;
    }
    memset(grown + o->size, 0, end - o->size);
    o->data = grown;
    o->size = end;
  }
  if (op->value.len) memcpy(o->data + op->offset, op->value.data, op->value.len);
  return 0;
}

static int lg_apply(strata_objectstore *os, const strata_txn *txn, strata_err *err) {
  for (size_t i = 0; i < txn->n_ops; ++i) {
    const strata_op *op = &txn->ops[i];
    int rc = 0;
    switch (op->type) {
      case STRATA_OP_MKCOLL:
        break;
      case STRATA_OP_TOUCH:
      case STRATA_OP_WRITE:
        rc = lg_write(os, op, err);
        break;
      default:
        fail(err, "op not supported by the legacy test store");
        rc = -EOPNOTSUPP;
    }
    if (rc != 0) return rc;
  }
  return 0;
}

static int lg_checkpoint(strata_objectstore *os, uint64_t seq, strata_err *err) {
  (void)os;
  (void)seq;
  (void)err;
  return 0;
}

static int lg_committed_seq(strata_objectstore *os, uint64_t *seq, strata_err *err) {
  (void)os;
  (void)err;
  *seq = 0;
  return 0;
}

static int64_t lg_read(strata_objectstore *os, strata_slice coll, strata_slice oid, uint64_t offset,
                       uint64_t length, void *buf, strata_err *err) {
  (void)coll;
  struct object *o = find(os, oid);
  if (!o) {
    fail(err, "no such object");
    return -ENOENT;
  }
  if (offset >= o->size) return 0;
  size_t n = o->size - offset < length ? o->size - offset : length;
  memcpy(buf, o->data + offset, n);
  return (int64_t)n;
}

static int lg_stat(strata_objectstore *os, strata_slice coll, strata_slice oid,
                   strata_object_stat *out, strata_err *err) {
  (void)coll;
  struct object *o = find(os, oid);
  if (!o) {
    fail(err, "no such object");
    return -ENOENT;
  }
  out->size = o->size;
  out->allocated_bytes = o->size;
  out->n_xattrs = 0;
  return 0;
}

/* The rest of the 1.0 read side is not needed by the test. */
static int64_t lg_getxattr(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice n,
                           void *b, size_t cap, strata_err *e) {
  (void)os, (void)c, (void)o, (void)n, (void)b, (void)cap, (void)e;
  return -EOPNOTSUPP;
}
static int lg_getxattrs(strata_objectstore *os, strata_slice c, strata_slice o, strata_kv_cb cb,
                        void *ctx, strata_err *e) {
  (void)os, (void)c, (void)o, (void)cb, (void)ctx, (void)e;
  return -EOPNOTSUPP;
}
static int64_t lg_omap_get_header(strata_objectstore *os, strata_slice c, strata_slice o, void *b,
                                  size_t cap, strata_err *e) {
  (void)os, (void)c, (void)o, (void)b, (void)cap, (void)e;
  return -EOPNOTSUPP;
}
static int64_t lg_omap_get(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice k,
                           void *b, size_t cap, strata_err *e) {
  (void)os, (void)c, (void)o, (void)k, (void)b, (void)cap, (void)e;
  return -EOPNOTSUPP;
}
static int lg_omap_iterate(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice sa,
                           strata_slice end, uint64_t limit, strata_kv_cb cb, void *ctx,
                           strata_err *e) {
  (void)os, (void)c, (void)o, (void)sa, (void)end, (void)limit, (void)cb, (void)ctx, (void)e;
  return -EOPNOTSUPP;
}
static int lg_list_objects(strata_objectstore *os, strata_slice c, strata_slice sa, uint64_t limit,
                           strata_name_cb cb, void *ctx, strata_err *e) {
  (void)os, (void)c, (void)sa, (void)limit, (void)cb, (void)ctx, (void)e;
  return -EOPNOTSUPP;
}
/* The collections are fixed: a, b, c. */
static int lg_list_collections(strata_objectstore *os, strata_name_cb cb, void *ctx,
                               strata_err *e) {
  static const char *const names[] = {"a", "b", "c"};
  (void)os, (void)e;
  for (size_t i = 0; i < 3; ++i) {
    strata_slice name = {names[i], 1};
    if (cb(ctx, name) != 0) return 0; /* a stop, as the 1.0-1.2 headers said */
  }
  return 0;
}
static int lg_usage(strata_objectstore *os, strata_store_usage *out, strata_err *e) {
  (void)os, (void)out, (void)e;
  return -EOPNOTSUPP;
}
static int64_t lg_fsck(strata_objectstore *os, strata_err *e) {
  (void)os, (void)e;
  return 0;
}

static const strata_objectstore_ops kOps = {sizeof(strata_objectstore_ops),
                                            0,
                                            lg_mkfs,
                                            lg_open,
                                            lg_close,
                                            lg_capabilities,
                                            lg_apply,
                                            lg_checkpoint,
                                            lg_committed_seq,
                                            lg_read,
                                            lg_stat,
                                            lg_getxattr,
                                            lg_getxattrs,
                                            lg_omap_get_header,
                                            lg_omap_get,
                                            lg_omap_iterate,
                                            lg_list_objects,
                                            lg_list_collections,
                                            lg_usage,
                                            lg_fsck
#if STRATA_ABI_MINOR >= 2
                                            /* no staged writes, no stage_release */
                                            ,
                                            NULL,
                                            NULL,
                                            NULL
#endif
};

static const strata_option_spec kOptions[] = {
    {"unused", STRATA_OPT_STRING, "", NULL, "takes no real options"}};

static const strata_plugin_descriptor kDescriptor = {
    sizeof(strata_plugin_descriptor),
    STRATA_ABI_MAJOR,
    STRATA_ABI_MINOR,
    STRATA_KIND_OBJECTSTORE,
    0,
    PLUGIN_NAME,
    "1.0.0",
    "a plugin built against the frozen ABI 1.x headers of an older minor",
    &kOps,
    kOptions,
    1,
    {0}};

STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *strata_plugin_entry_v1(void) {
  return &kDescriptor;
}
