/*
 * Strata object-store plugin ABI (kind STRATA_KIND_OBJECTSTORE).
 *
 * Data model. A store holds collections (the OSD's placement groups), named
 * by byte strings. A collection holds objects, named by byte strings
 * (1..4096 bytes, any bytes). Each object has four parts:
 *   - data: a byte stream of a logical size; never-written ranges read as zero;
 *   - xattrs: small named values (name <= 255 bytes, value <= 64 KiB);
 *   - an omap: a map of keys to values sorted bytewise;
 *   - an omap header: one opaque value.
 *
 * Division of labour with the host. The host owns durability ordering: it
 * writes each transaction to a journal plugin (write-ahead) and only then
 * calls apply(); it calls checkpoint() from time to time and trims the journal
 * up to the checkpointed sequence. After a crash the host reads
 * committed_seq() and replays every journaled transaction after it through
 * apply(). A backend therefore must:
 *   - apply ops in the order given, atomically as seen by readers of this
 *     process is NOT required (the host serialises readers of objects with
 *     transactions in flight), but
 *   - tolerate replay: a transaction with seq <= the state on disk may be
 *     applied again. All ops below are defined so that re-applying a suffix of
 *     the transaction stream in order yields the same state (the host turns
 *     appends into writes at absolute offsets). Only CLONE reads another
 *     object; the host checkpoints right after any transaction containing a
 *     CLONE before applying the next one, unless the backend declares
 *     STRATA_OS_CAP_EXACT_REPLAY.
 *   - make everything applied durable on checkpoint(seq) and remember seq.
 *
 * Threading. apply, checkpoint and stage_release_unused are called by one
 * host thread at a time; stage_write and stage_release may be called
 * concurrently by several. The read functions may be called from any number of threads
 * concurrently with each other and with apply/checkpoint. control may be
 * called from any thread, concurrently with everything but open and close.
 */
#ifndef STRATA_OBJECTSTORE_H
#define STRATA_OBJECTSTORE_H

#include "strata/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_objectstore strata_objectstore; /* opaque, plugin-owned */

/* Capability bits (strata_objectstore_ops.capabilities). */
/* apply() of one transaction is atomic and checkpoint-free durable state is
 * always a prefix of applied transactions (e.g. one KV write batch carrying
 * its seq): replay skips what is already there, so no CLONE barrier needed. */
#define STRATA_OS_CAP_EXACT_REPLAY (1ull << 0)
/* A crash rolls the store back to the last checkpoint exactly (e.g. btrfs
 * snapshots), so the host may apply a transaction before its journal write
 * is durable: journaling and applying run in parallel. Implies exact replay. */
#define STRATA_OS_CAP_ROLLBACK_CHECKPOINT (1ull << 1)
/* apply() with sync makes the transaction durable by itself; the store can
 * run without a journal plugin ("journal = none"). */
#define STRATA_OS_CAP_SELF_DURABLE (1ull << 2)
/* CLONE shares extents (reflink) instead of copying. Informational. */
#define STRATA_OS_CAP_CHEAP_CLONE (1ull << 3)
/* stage_write/STRATA_OP_WRITE_STAGED are implemented (ABI 1.1). */
#define STRATA_OS_CAP_STAGED_WRITES (1ull << 4)
/* Reads verify block checksums of the data at rest: a read touching a block
 * whose bytes fail their checksum, or whose data is missing, returns -EIO
 * (the message names the object, the block and its offsets) and never the
 * bytes. Without it the OSD verifies whole-object reads against the object's
 * data digest where it has one. Informational. */
#define STRATA_OS_CAP_DATA_CHECKSUMS (1ull << 5)

typedef enum strata_op_type {
  /* collection ops: only `collection` is used */
  STRATA_OP_MKCOLL = 1,     /* create the collection; no-op if it exists */
  STRATA_OP_RMCOLL = 2,     /* remove the collection and every object in it */
  /* object ops */
  STRATA_OP_TOUCH = 10,     /* create the object empty if missing */
  STRATA_OP_WRITE = 11,     /* write value at offset; size = max(size, offset+len) */
  STRATA_OP_WRITE_FULL = 12,/* replace data with value; xattrs and omap kept */
  STRATA_OP_TRUNCATE = 13,  /* set size to offset; extending reads as zero */
  STRATA_OP_ZERO = 14,      /* zero [offset, offset+length) clipped to the size;
                               the size never changes */
  STRATA_OP_REMOVE = 15,    /* remove data, xattrs, omap; no-op if missing */
  STRATA_OP_SETXATTR = 20,  /* key = name, value */
  STRATA_OP_RMXATTR = 21,   /* key = name; no-op if missing */
  STRATA_OP_OMAP_SET = 30,  /* key, value */
  STRATA_OP_OMAP_RM = 31,   /* key; no-op if missing */
  STRATA_OP_OMAP_CLEAR = 32,/* remove all keys (header kept) */
  STRATA_OP_OMAP_SET_HEADER = 33, /* value */
  STRATA_OP_OMAP_RM_RANGE = 34,   /* remove keys in [key, value) bytewise */
  STRATA_OP_CLONE = 40,     /* value = destination object name in the same
                               collection; destination becomes an independent
                               copy of data, xattrs, omap and header */
  /* ABI 1.1: replace data with staged bytes. offset = stage id returned by
   * stage_write, length = its byte count. */
  STRATA_OP_WRITE_STAGED = 50
} strata_op_type;

/* ABI 1.3: op types from STRATA_OP_HOST_MIN up are the host's own (e.g. an
 * append the host resolves into a WRITE at the object's size before it
 * journals the transaction). They are never passed to a plugin: the host
 * refuses to apply a transaction that still holds one. Op types the ABI
 * defines stay below it. */
#define STRATA_OP_HOST_MIN 0x8000u

/* Every object op creates the object if it does not exist, except REMOVE,
 * RMXATTR, OMAP_RM, OMAP_RM_RANGE and OMAP_CLEAR which are no-ops on a
 * missing object. Edge cases, fixed by the conformance kit:
 *   - WRITE of zero bytes still sets size = max(size, offset);
 *   - OMAP_RM_RANGE with an empty end removes every key >= key;
 *   - CLONE of a missing source creates the source empty first;
 *   - RMCOLL of a missing collection is a no-op;
 *   - during replay an object op may name a collection that a later,
 *     already-applied RMCOLL removed: it is a no-op then, not an error. The host only submits object ops into collections that
 * exist (it validates before journaling), so apply() failing means the
 * backend's media failed: the host stops the store. */
/* Ops may grow (ABI 1.3): a transaction carries the size of one op as its
 * sender knows it (strata_txn.op_size) and its ops are op_size bytes apart.
 * Step through them with strata_txn_op(), and read a field appended after
 * 1.2 only when STRATA_OP_HAS(txn, field) says the sender sent it. */
typedef struct strata_op {
  uint32_t type; /* strata_op_type */
  uint32_t reserved0;
  strata_slice collection;
  strata_slice object;
  strata_slice key;
  strata_slice value;
  uint64_t offset;
  uint64_t length;
} strata_op;

/* Transaction flags. */
/* Make this transaction durable before apply() returns. Sent only to
 * STRATA_OS_CAP_SELF_DURABLE backends when the store runs without a journal
 * ("journal = none"); such a store sets it on every transaction. */
#define STRATA_TXN_SYNC (1u << 0)

/* The op's name for messages ("WRITE", "OMAP_SET", ...); "unknown op" for
 * types this header does not know. A convenience compiled into the caller,
 * not an ABI entry point. */
static inline const char *strata_op_type_name(uint32_t type) {
  switch (type) {
    case STRATA_OP_MKCOLL: return "MKCOLL";
    case STRATA_OP_RMCOLL: return "RMCOLL";
    case STRATA_OP_TOUCH: return "TOUCH";
    case STRATA_OP_WRITE: return "WRITE";
    case STRATA_OP_WRITE_FULL: return "WRITE_FULL";
    case STRATA_OP_TRUNCATE: return "TRUNCATE";
    case STRATA_OP_ZERO: return "ZERO";
    case STRATA_OP_REMOVE: return "REMOVE";
    case STRATA_OP_SETXATTR: return "SETXATTR";
    case STRATA_OP_RMXATTR: return "RMXATTR";
    case STRATA_OP_OMAP_SET: return "OMAP_SET";
    case STRATA_OP_OMAP_RM: return "OMAP_RM";
    case STRATA_OP_OMAP_CLEAR: return "OMAP_CLEAR";
    case STRATA_OP_OMAP_SET_HEADER: return "OMAP_SET_HEADER";
    case STRATA_OP_OMAP_RM_RANGE: return "OMAP_RM_RANGE";
    case STRATA_OP_CLONE: return "CLONE";
    case STRATA_OP_WRITE_STAGED: return "WRITE_STAGED";
    default: return "unknown op";
  }
}

typedef struct strata_txn {
  uint64_t seq; /* host sequence number, strictly increasing across calls */
  /* n_ops ops, op_size bytes apart: index them with strata_txn_op(). */
  const strata_op *ops;
  size_t n_ops;
  uint32_t flags; /* STRATA_TXN_* */
  /* ABI 1.3 (was reserved0, so the layout is that of 1.0): the size of one
   * op as the sender knows it, i.e. its sizeof(strata_op). 0 means the 1.2
   * layout (STRATA_OP_SIZE_1_2): what a sender before 1.3, or one that
   * zero-fills, gives. A host passes ops of exactly the 1.2 layout to a
   * plugin of minor < 3, which steps by its own sizeof(strata_op). */
  uint32_t op_size;
} strata_txn;

/* sizeof(strata_op) in ABI 1.0 to 1.3. */
#define STRATA_OP_SIZE_1_2 88u

/* The distance between two ops of txn in bytes. */
static inline size_t strata_txn_op_stride(const strata_txn *txn) {
  return txn->op_size ? txn->op_size : STRATA_OP_SIZE_1_2;
}

/* Op i of txn. */
static inline const strata_op *strata_txn_op(const strata_txn *txn, size_t i) {
  return (const strata_op *)((const char *)txn->ops + i * strata_txn_op_stride(txn));
}

/* Whether the ops of txn carry `field` (a field appended to strata_op after
 * 1.2 is read only when this holds; otherwise it has its zero default). */
#define STRATA_OP_HAS(txn, field)                   \
  (strata_txn_op_stride(txn) >= offsetof(strata_op, field) + sizeof(((strata_op *)0)->field))

typedef struct strata_object_stat {
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t size;
  uint64_t allocated_bytes; /* space used on media, if known, else size */
  uint64_t n_xattrs;
  uint64_t reserved[4];
} strata_object_stat;

typedef struct strata_store_usage {
  uint32_t struct_size;
  uint32_t reserved0;
  uint64_t total_bytes;
  uint64_t used_bytes;
  uint64_t n_objects; /* UINT64_MAX if unknown */
  uint64_t reserved[4];
} strata_store_usage;

/* Visitor callbacks, by the convention of plugin.h: return 0 to continue,
 * non-zero to stop, and the iterating function returns that value (a
 * plugin of minor < 3 returned 0 then; the host adapts). Slices are valid
 * only during the call. */
typedef int (*strata_name_cb)(void *ctx, strata_slice name);
typedef int (*strata_kv_cb)(void *ctx, strata_slice key, strata_slice value);

typedef struct strata_objectstore_ops {
  uint32_t struct_size;
  uint32_t reserved0;

  /* --- lifecycle -------------------------------------------------------- */
  /* Create an empty store at args->path (a directory that exists and is
   * empty, or holds nothing of a store). */
  int (*mkfs)(const strata_open_args *args, strata_err *err);
  /* Open the store. On success *out is the instance; on failure *out is NULL.
   * Does not replay anything: the host does. */
  int (*open)(const strata_open_args *args, strata_objectstore **out, strata_err *err);
  /* Release everything; pending applied-but-not-checkpointed state may be lost
   * (the host checkpoints before a clean close). Safe with NULL. */
  void (*close)(strata_objectstore *os);
  uint64_t (*capabilities)(strata_objectstore *os);

  /* --- write side: one host thread at a time ---------------------------- */
  int (*apply)(strata_objectstore *os, const strata_txn *txn, strata_err *err);
  /* Make every applied transaction durable; afterwards committed_seq() must
   * return seq (the last applied seq). */
  int (*checkpoint)(strata_objectstore *os, uint64_t seq, strata_err *err);
  int (*committed_seq)(strata_objectstore *os, uint64_t *seq, strata_err *err);

  /* --- read side: thread-safe ------------------------------------------- */
  /* Returns the number of bytes copied into buf (short only at end of
   * object), -ENOENT if the object or collection is missing. */
  int64_t (*read)(strata_objectstore *os, strata_slice coll, strata_slice oid,
                  uint64_t offset, uint64_t length, void *buf, strata_err *err);
  int (*stat)(strata_objectstore *os, strata_slice coll, strata_slice oid,
              strata_object_stat *out, strata_err *err);
  /* Copies the value into buf when it fits and returns its full length; if
   * cap is too small nothing is copied and the full length is returned too
   * (call again with a larger buffer). -ENODATA if absent, -ENOENT if the
   * object is missing. */
  int64_t (*getxattr)(strata_objectstore *os, strata_slice coll, strata_slice oid,
                      strata_slice name, void *buf, size_t cap, strata_err *err);
  /* Visits every xattr in bytewise name order. */
  int (*getxattrs)(strata_objectstore *os, strata_slice coll, strata_slice oid,
                   strata_kv_cb cb, void *ctx, strata_err *err);
  /* Same buffer convention as getxattr; an object without a header has an
   * empty one (returns 0). */
  int64_t (*omap_get_header)(strata_objectstore *os, strata_slice coll, strata_slice oid,
                             void *buf, size_t cap, strata_err *err);
  /* Same buffer convention as getxattr; -ENODATA if the key is absent. */
  int64_t (*omap_get)(strata_objectstore *os, strata_slice coll, strata_slice oid,
                      strata_slice key, void *buf, size_t cap, strata_err *err);
  /* Visits omap entries in bytewise key order: keys > start_after (from the
   * first key when start_after.len == 0) and < end (no bound when
   * end.len == 0), at most limit entries (0 = no limit). */
  int (*omap_iterate)(strata_objectstore *os, strata_slice coll, strata_slice oid,
                      strata_slice start_after, strata_slice end, uint64_t limit,
                      strata_kv_cb cb, void *ctx, strata_err *err);
  /* Visits object names > start_after in bytewise order, at most limit
   * (0 = no limit). The order is stable across restarts, so the last name
   * visited is a cursor for the next call. */
  int (*list_objects)(strata_objectstore *os, strata_slice coll, strata_slice start_after,
                      uint64_t limit, strata_name_cb cb, void *ctx, strata_err *err);
  int (*list_collections)(strata_objectstore *os, strata_name_cb cb, void *ctx,
                          strata_err *err);
  int (*usage)(strata_objectstore *os, strata_store_usage *out, strata_err *err);
  /* Consistency check of the backend's own structures; problems are reported
   * through the log service, the return is the number of problems found
   * (>= 0) or a negative errno if the check could not run. */
  int64_t (*fsck)(strata_objectstore *os, strata_err *err);

  /* --- ABI 1.1: staged writes (STRATA_OS_CAP_STAGED_WRITES) -------------- */
  /* Store data durably outside any transaction and return a stage id > 0 in
   * *stage_id. A later transaction's STRATA_OP_WRITE_STAGED binds it to an
   * object. A stage must stay readable until a checkpoint covering the
   * transaction that consumed it has completed (replay may bind it again);
   * a stage the journal never referenced is removed by stage_release.
   * Thread-safe: the host's submitters call it from several threads at once,
   * concurrently with apply and checkpoint, so that large writes stream in
   * parallel (one 4 MiB write at a time cannot keep a disk busy). */
  int (*stage_write)(strata_objectstore *os, const void *data, size_t len, uint64_t *stage_id,
                     strata_err *err);
  /* Drop every stage not consumed by an applied transaction. The host calls
   * it after replay, when no transaction is in flight. */
  int (*stage_release_unused)(strata_objectstore *os, strata_err *err);

  /* --- ABI 1.2 ---------------------------------------------------------- */
  /* Drop one stage that no transaction will reference (the host staged a
   * write it then abandoned: a failed guard, a resent op answered from the
   * log, a message of a past interval). Never called for an id a queued
   * transaction names. Thread-safe like stage_write. A plugin built for 1.1
   * lacks it; its abandoned stages wait for stage_release_unused at the next
   * open. */
  int (*stage_release)(strata_objectstore *os, uint64_t stage_id, strata_err *err);

  /* --- ABI 1.3 ---------------------------------------------------------- */
  /* A request or hint that needs no slot of its own (plugin.h, "Control
   * calls"): op is one of STRATA_OS_CTL_* or a vendor op, arg its argument.
   * An op the plugin does not implement answers -EOPNOTSUPP. Thread-safe.
   * May be NULL: the host then answers -EOPNOTSUPP itself. */
  int (*control)(strata_objectstore *os, int op, void *arg, strata_err *err);
} strata_objectstore_ops;

/* Public control ops of the object store (numbers from the public range of
 * plugin.h; never reused). */
/* arg: uint64_t *, set to the number of checksum failures the backend met
 * since open: blocks of data at rest that failed their checksum (or were
 * missing), found by a read (which answered -EIO) or by the backend's own
 * work (e.g. the read half of a partial overwrite). What was logged one line
 * at a time, as a count for health reports. For backends with
 * STRATA_OS_CAP_DATA_CHECKSUMS; others answer -EOPNOTSUPP. */
#define STRATA_OS_CTL_CHECKSUM_FAILURES 0x0001

#ifdef __cplusplus
}
#endif

#endif /* STRATA_OBJECTSTORE_H */
