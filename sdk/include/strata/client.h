/*
 * Strata client API — talk to a running cluster (librados-like).
 *
 * Data model. A cluster holds pools; a pool holds objects named by text
 * (1..4096 bytes, no NUL). Each object has:
 *   - data: a byte stream of a logical size; never-written ranges read as zero;
 *   - xattrs: small named values (name 1..255 bytes of text, value <= 64 KiB);
 *   - an omap: keys (any bytes) -> values, sorted bytewise;
 *   - an omap header: one opaque value;
 *   - a version: a number that grows with every write to the object (the
 *     position of that write in its placement group's log). Guards compare it.
 * Every operation on one object is atomic: a compound write (a write op with
 * several steps) is applied entirely or not at all, and is acknowledged only
 * when every replica has it durable.
 *
 * The library computes placement itself (object -> placement group ->
 * primary OSD), sends each operation straight to the primary and resends it
 * when the cluster map changes or a connection breaks. Resends carry the same
 * request id, which the OSDs deduplicate, so an operation is never applied
 * twice.
 *
 * A write that fails with -ETIMEDOUT (client_op_timeout_ms) or -ESHUTDOWN
 * (the handle was shut down while it was in flight) has an UNKNOWN outcome:
 * it may not have been applied, or it may have been applied already, or an
 * OSD may still hold it queued (e.g. its placement group waiting for enough
 * replicas) and apply it later -- after the call returned, even after the
 * program exited (seen: up to 90 s later). Re-reading the object does not
 * settle it, since the write may land after the read. To learn the outcome,
 * give the write a request id (strata_write_op_set_request_id) and, after
 * such an error, operate the same op with the same id again, from this or
 * any other handle or process, until it returns something other than
 * -ETIMEDOUT/-ESHUTDOWN: that result is the write's one outcome. The OSDs
 * apply a given request id at most once per object: if the first attempt
 * was applied (before or after the retry) the retry is answered with its
 * result and version instead of being applied again, and a first attempt
 * that arrives after the retry was applied is discarded the same way.
 *
 * Conventions, for every call below:
 *   - Results are int (or int64_t where a length is returned): >= 0 on
 *     success, a negative errno on failure. Common errors: -EINVAL (bad
 *     argument), -ENOTCONN (cluster not connected), -ESHUTDOWN (cluster shut
 *     down), -ENOENT (no such pool or object), -ETIMEDOUT (client_op_timeout_ms
 *     passed), -EACCES (the cluster refused our key), -E2BIG (more than
 *     STRATA_MAX_OP_DATA bytes in one operation), -EDEADLK (a synchronous call
 *     made from inside a completion callback), -ENOSPC (a write that may take
 *     space, refused because an OSD of its placement group is full: nothing
 *     of it was applied; removes, truncates and removals of xattrs and omap
 *     keys still succeed, so that space can be freed).
 *   - strata_last_error() returns a one-line message with context for the
 *     most recent failing call made by the calling thread.
 *   - Buffers have explicit lengths. Object, pool, xattr and entity names are
 *     NUL-terminated strings. Omap keys and values are bytes (strata_bytes).
 *   - Calls that return a variable-length value into a caller buffer copy at
 *     most `len` bytes and return the value's full length (like snprintf), so
 *     a result larger than `len` means "call again with a bigger buffer".
 *     Text results are NUL-terminated when len > 0 and the return value does
 *     not count the NUL.
 *   - Structs the caller passes start with struct_size, which the caller sets
 *     to sizeof(the struct) as its header declares it. The library never reads
 *     or writes past struct_size, so a program built against an older header
 *     keeps working with a newer library; struct_size smaller than the 1.0
 *     layout is -EINVAL.
 *   - Handles are opaque. Unless a comment says otherwise, calls on a cluster
 *     or ioctx handle are thread-safe; builders (write/read ops), iterators and
 *     listings are used by one thread at a time.
 *   - Nothing here throws, and the library installs no signal handlers.
 *
 * Version history (STRATA_CLIENT_VERSION_*); only ever appended to:
 *   1.0  clusters, pools, ioctx, object I/O, xattrs, omap, listing, write and
 *        read ops with guards, asynchronous calls, mon and PG commands.
 *   1.1  strata_write_op_set_request_id (learning a timed-out write's outcome).
 *   1.2  service sessions (strata_session_*).
 *   1.3  object snapshots: strata_write_op_snap_context, _snap_trim,
 *        _snap_rollback, strata_read_op_set_snap, _list_snaps.
 */
#ifndef STRATA_CLIENT_H
#define STRATA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_CLIENT_VERSION_MAJOR 1
#define STRATA_CLIENT_VERSION_MINOR 3

#if defined(__GNUC__)
#define STRATA_CLIENT_API __attribute__((visibility("default")))
#else
#define STRATA_CLIENT_API
#endif

/* Most data bytes one operation (one call, or one write/read op) may carry. */
#define STRATA_MAX_OP_DATA (128u << 20)

typedef struct strata_cluster *strata_cluster_t;        /* connection to one cluster */
typedef struct strata_ioctx *strata_ioctx_t;            /* I/O on one pool */
typedef struct strata_completion *strata_completion_t;  /* an asynchronous call */
typedef struct strata_write_op *strata_write_op_t;      /* compound write on one object */
typedef struct strata_read_op *strata_read_op_t;        /* compound read on one object */
typedef struct strata_xattr_iter *strata_xattr_iter_t;  /* xattrs of an object */
typedef struct strata_omap_iter *strata_omap_iter_t;    /* omap entries of an object */
typedef struct strata_list *strata_list_t;              /* objects of a pool */

/* A byte string (omap keys and values); data may be NULL when len is 0. */
typedef struct strata_bytes {
  const void *data;
  size_t len;
} strata_bytes;

/* The library's version; either pointer may be NULL. */
STRATA_CLIENT_API void strata_client_version(int *major, int *minor);

/* The message of the most recent failing call made by this thread ("" if
 * none). Valid until this thread's next call into the library. Asynchronous
 * results carry only their errno (strata_completion_get_return_value). */
STRATA_CLIENT_API const char *strata_last_error(void);

/* ======================================================================== */
/* Cluster handle                                                            */

/* Skip $STRATA_CONF and ./strata.conf when conf_path is NULL. */
#define STRATA_CLUSTER_NO_DEFAULT_CONF (1u << 0)

typedef struct strata_cluster_args {
  uint32_t struct_size; /* sizeof(strata_cluster_args) */
  uint32_t flags;       /* STRATA_CLUSTER_* */
  /* The config file (INI, the one the daemons use). NULL: $STRATA_CONF,
   * else ./strata.conf if it exists, else no file (built-in defaults). */
  const char *conf_path;
  /* The entity to connect as, "client.NAME". NULL: the config's client_name,
   * else "client.admin". */
  const char *entity;
  /* "key=value" overrides, applied over the file (like `--set`). Useful
   * keys: mon_addr, keyring, key (this client's secret, base64, instead of
   * a keyring file), client_op_timeout_ms, plugin_path, log_level, log_file. */
  const char *const *overrides;
  size_t n_overrides;
} strata_cluster_args;

/* Creates an unconnected cluster handle. args may be NULL (all defaults).
 * Reads and validates the config file; a missing explicit conf_path, a bad
 * value or an unknown key in a [client] section fails here (-ENOENT,
 * -EINVAL) and *out is set to NULL. On success the caller owns *out and ends
 * it with strata_cluster_shutdown. */
STRATA_CLIENT_API int strata_cluster_create(const strata_cluster_args *args,
                                            strata_cluster_t *out);

/* Sets one config key before strata_cluster_connect (-EISCONN after). */
STRATA_CLIENT_API int strata_cluster_conf_set(strata_cluster_t c, const char *key,
                                              const char *value);

/* The effective value of a config key for this client (the file, overrides
 * and defaults applied). -ENOENT for a key this client does not know. */
STRATA_CLIENT_API int64_t strata_cluster_conf_get(strata_cluster_t c, const char *key, char *buf,
                                                  size_t len);

/* Connects to the monitor, authenticates and waits for the first cluster
 * map; timeout_ms 0 means 30 s. Returns -ETIMEDOUT, -ECONNREFUSED, -EACCES
 * (wrong key), -ENOENT (no keyring / no key for the entity) on failure; the
 * handle may then be shut down or connected again. Blocks the caller. */
STRATA_CLIENT_API int strata_cluster_connect(strata_cluster_t c, uint32_t timeout_ms);

/* Closes every connection and frees the handle. Operations still in flight
 * complete with -ESHUTDOWN (their callbacks run before this returns).
 * ioctx handles of this cluster stay valid only for strata_ioctx_destroy;
 * calls through them return -ESHUTDOWN. NULL is a no-op. From a completion
 * callback it does nothing (strata_last_error says so): stopping would wait
 * for the thread the callback runs on. */
STRATA_CLIENT_API void strata_cluster_shutdown(strata_cluster_t c);

/* This connection's id, "client.NAME.<16 hex digits>" — the id OSDs see on
 * every request (with a per-request number) to deduplicate resends. */
STRATA_CLIENT_API int64_t strata_cluster_instance_id(strata_cluster_t c, char *buf, size_t len);

/* The cluster's fsid (from the map). -ENOTCONN before connect. */
STRATA_CLIENT_API int64_t strata_cluster_fsid(strata_cluster_t c, char *buf, size_t len);

/* The epoch of the cluster map this client holds (0 before connect). */
STRATA_CLIENT_API uint64_t strata_cluster_map_epoch(strata_cluster_t c);

/* Waits until the client holds map `epoch` or newer. 0 or -ETIMEDOUT;
 * timeout_ms 0 means 30 s. */
STRATA_CLIENT_API int strata_cluster_wait_for_epoch(strata_cluster_t c, uint64_t epoch,
                                                    uint32_t timeout_ms);

/* ======================================================================== */
/* Pools                                                                     */

typedef struct strata_pool_args {
  uint32_t struct_size; /* sizeof(strata_pool_args) */
  uint32_t size;        /* replicas; 0: the monitor's default */
  uint32_t min_size;    /* replicas that must be up to accept writes; 0: default */
  uint32_t pg_num;      /* placement groups; 0: default */
} strata_pool_args;

typedef struct strata_pool_info {
  uint32_t struct_size; /* caller sets sizeof(strata_pool_info) */
  uint32_t id;
  uint32_t size;
  uint32_t min_size;
  uint32_t pg_num;
  uint32_t rule; /* placement rule */
} strata_pool_info;

/* Pool names as consecutive NUL-terminated strings followed by one more NUL
 * ("a\0b\0\0"; an empty list is "\0"). Returns the bytes the whole list
 * needs; the list is written only if that is <= len (otherwise buf is left
 * untouched: call again with a buffer of the returned size). */
STRATA_CLIENT_API int64_t strata_pool_list(strata_cluster_t c, char *buf, size_t len);

/* Creates a pool through the monitor and returns once this client's map
 * has it. args may be NULL (defaults). -EEXIST if it exists. */
STRATA_CLIENT_API int strata_pool_create(strata_cluster_t c, const char *name,
                                         const strata_pool_args *args);

/* Deletes a pool and every object in it. -ENOENT if it does not exist. */
STRATA_CLIENT_API int strata_pool_delete(strata_cluster_t c, const char *name);

/* The pool's id (>= 0), or -ENOENT (after checking the monitor's latest map,
 * like strata_ioctx_create). */
STRATA_CLIENT_API int64_t strata_pool_lookup(strata_cluster_t c, const char *name);

/* The pool's settings from this client's map. -ENOENT if unknown. */
STRATA_CLIENT_API int strata_pool_get_info(strata_cluster_t c, const char *name,
                                           strata_pool_info *out);

/* ======================================================================== */
/* I/O contexts                                                              */

/* An I/O context for the pool named `pool`; -ENOENT if there is none. A
 * pool this client's map does not have yet (another client just made it)
 * is looked for in the monitor's latest map before giving up. The caller
 * owns *out and frees it with strata_ioctx_destroy. */
STRATA_CLIENT_API int strata_ioctx_create(strata_cluster_t c, const char *pool,
                                          strata_ioctx_t *out);
STRATA_CLIENT_API int strata_ioctx_create_by_id(strata_cluster_t c, int64_t pool_id,
                                                strata_ioctx_t *out);

/* Frees the context. Asynchronous calls still in flight on it complete
 * normally. NULL is a no-op. */
STRATA_CLIENT_API void strata_ioctx_destroy(strata_ioctx_t io);

STRATA_CLIENT_API int64_t strata_ioctx_pool_id(strata_ioctx_t io);

/* Where an object lives under this client's current map. */
#define STRATA_MAX_ACTING 16
typedef struct strata_object_location {
  uint32_t struct_size; /* caller sets sizeof(strata_object_location) */
  uint32_t pool;
  uint32_t seed;        /* the placement group is "<pool>.<seed in hex>" */
  int32_t primary;      /* OSD id, -1 when no OSD serves the PG now */
  uint64_t epoch;       /* of the map this was computed from */
  uint32_t n_acting;    /* entries used in acting, primary first */
  int32_t acting[STRATA_MAX_ACTING];
} strata_object_location;

STRATA_CLIENT_API int strata_object_locate(strata_ioctx_t io, const char *oid,
                                           strata_object_location *out);

/* ======================================================================== */
/* Object I/O (synchronous: each call returns when the operation is durable
 * on every acting replica, or when it failed)                               */

/* (Named apart from objectstore.h's strata_object_stat, the backend ABI's
 * stat, so that one source file may use both headers.) */
typedef struct strata_obj_stat {
  uint32_t struct_size; /* caller sets sizeof(strata_obj_stat) */
  uint32_t reserved0;
  uint64_t size;        /* bytes */
  uint64_t mtime_ns;    /* last data change, ns since the Unix epoch */
  uint64_t version;     /* see the data model above */
} strata_obj_stat;

/* Writes len bytes at offset off, creating the object if needed; the size
 * becomes max(size, off + len). */
STRATA_CLIENT_API int strata_write(strata_ioctx_t io, const char *oid, const void *buf, size_t len,
                                   uint64_t off);
/* Replaces the object's data with buf (xattrs and omap are kept). */
STRATA_CLIENT_API int strata_write_full(strata_ioctx_t io, const char *oid, const void *buf,
                                        size_t len);
/* Writes at the current end of the object. */
STRATA_CLIENT_API int strata_append(strata_ioctx_t io, const char *oid, const void *buf,
                                    size_t len);
/* Reads up to len bytes at off into buf; returns the bytes read (short at
 * the end of the object, 0 past it or when len is 0). -ENOENT if the object
 * does not exist. */
STRATA_CLIENT_API int64_t strata_read(strata_ioctx_t io, const char *oid, void *buf, size_t len,
                                      uint64_t off);
STRATA_CLIENT_API int strata_stat(strata_ioctx_t io, const char *oid, strata_obj_stat *out);
/* Removes data, xattrs, omap and header. -ENOENT if the object does not
 * exist. */
STRATA_CLIENT_API int strata_remove(strata_ioctx_t io, const char *oid);
/* Sets the size; growing reads as zeros. Creates the object if needed. */
STRATA_CLIENT_API int strata_truncate(strata_ioctx_t io, const char *oid, uint64_t size);
/* Zeroes [off, off + len) clipped to the size; never changes the size. */
STRATA_CLIENT_API int strata_zero(strata_ioctx_t io, const char *oid, uint64_t off, uint64_t len);
/* Creates an empty object; exclusive != 0 fails with -EEXIST if it exists. */
STRATA_CLIENT_API int strata_create(strata_ioctx_t io, const char *oid, int exclusive);

/* ======================================================================== */
/* Xattrs                                                                    */

/* Copies at most len bytes of the value into buf and returns the value's
 * length. -ENODATA if the object has no such xattr, -ENOENT if no object. */
STRATA_CLIENT_API int64_t strata_getxattr(strata_ioctx_t io, const char *oid, const char *name,
                                          void *buf, size_t len);
STRATA_CLIENT_API int strata_setxattr(strata_ioctx_t io, const char *oid, const char *name,
                                      const void *value, size_t len);
/* -ENODATA if the object has no such xattr, -ENOENT if no object. */
STRATA_CLIENT_API int strata_rmxattr(strata_ioctx_t io, const char *oid, const char *name);

/* All xattrs of the object, sorted by name. The caller frees *iter with
 * strata_xattr_iter_end. */
STRATA_CLIENT_API int strata_getxattrs(strata_ioctx_t io, const char *oid,
                                       strata_xattr_iter_t *iter);
/* Returns 1 and the next entry (pointers valid until the iterator ends;
 * *name is NUL-terminated), or 0 when there are no more. */
STRATA_CLIENT_API int strata_xattr_iter_next(strata_xattr_iter_t iter, const char **name,
                                             const void **value, size_t *len);
STRATA_CLIENT_API void strata_xattr_iter_end(strata_xattr_iter_t iter);

/* ======================================================================== */
/* Omap                                                                      */

/* The entries among keys[0..n) that exist, in key order. */
STRATA_CLIENT_API int strata_omap_get_keys(strata_ioctx_t io, const char *oid,
                                           const strata_bytes *keys, size_t n,
                                           strata_omap_iter_t *iter);
/* Up to max entries with start_after < key < end, in key order.
 * start_after NULL or empty: from the first key. end NULL or empty: no end.
 * strata_omap_iter_more() tells whether max cut the page short; continue
 * with start_after = the last key returned. max 0 means 1000. */
STRATA_CLIENT_API int strata_omap_list(strata_ioctx_t io, const char *oid, const void *start_after,
                                       size_t start_after_len, const void *end, size_t end_len,
                                       uint32_t max, strata_omap_iter_t *iter);
/* Returns 1 and the next entry (pointers valid until the iterator ends), or
 * 0 when there are no more. */
STRATA_CLIENT_API int strata_omap_iter_next(strata_omap_iter_t iter, const void **key,
                                            size_t *key_len, const void **value,
                                            size_t *value_len);
/* Entries in the iterator (all of them, not just the ones left). */
STRATA_CLIENT_API size_t strata_omap_iter_size(strata_omap_iter_t iter);
/* 1 if a listing stopped at `max` with keys left in its range, else 0. */
STRATA_CLIENT_API int strata_omap_iter_more(strata_omap_iter_t iter);
STRATA_CLIENT_API void strata_omap_iter_end(strata_omap_iter_t iter);

/* Omap reads and removals on a missing object fail with -ENOENT; omap_set
 * and omap_set_header create the object. */

/* Sets keys[i] = values[i] for i < n (creating the object if needed). */
STRATA_CLIENT_API int strata_omap_set(strata_ioctx_t io, const char *oid, const strata_bytes *keys,
                                      const strata_bytes *values, size_t n);
/* Missing keys are ignored. */
STRATA_CLIENT_API int strata_omap_rm_keys(strata_ioctx_t io, const char *oid,
                                          const strata_bytes *keys, size_t n);
/* Removes every key with first <= key < end; end empty: no end. */
STRATA_CLIENT_API int strata_omap_rm_range(strata_ioctx_t io, const char *oid, const void *first,
                                           size_t first_len, const void *end, size_t end_len);
/* Removes every key (the header stays). */
STRATA_CLIENT_API int strata_omap_clear(strata_ioctx_t io, const char *oid);
/* Copies at most len bytes of the header; returns its length (0 if none). */
STRATA_CLIENT_API int64_t strata_omap_get_header(strata_ioctx_t io, const char *oid, void *buf,
                                                 size_t len);
STRATA_CLIENT_API int strata_omap_set_header(strata_ioctx_t io, const char *oid, const void *buf,
                                             size_t len);

/* ======================================================================== */
/* Listing the objects of a pool                                             */

/* Starts a listing of the pool's objects, placement group by placement
 * group (order: by PG, then by name within a PG). cursor NULL or "" starts
 * at the beginning; otherwise it is a string from strata_list_cursor, and
 * the listing resumes after the object it was taken at. Objects created or
 * removed during a listing may or may not be returned; each object that
 * exists throughout is returned once, unless the pool's pg_num changes. */
STRATA_CLIENT_API int strata_list_open(strata_ioctx_t io, const char *cursor, strata_list_t *out);
/* Returns 1 and the next object's name (valid until the next call on l;
 * NUL-terminated, its length in *len if len is not NULL), 0 at the end, or a
 * negative errno (the listing may be retried with strata_list_next). */
STRATA_CLIENT_API int strata_list_next(strata_list_t l, const char **oid, size_t *len);
/* The position after the last object returned, as text (an opaque string
 * of at most 8201 characters, for strata_list_open). */
STRATA_CLIENT_API int64_t strata_list_cursor(strata_list_t l, char *buf, size_t len);
STRATA_CLIENT_API void strata_list_close(strata_list_t l);

/* ======================================================================== */
/* Compound operations                                                       */

/* Comparison for cmpxattr guards (passed as int: an out-of-range value is
 * an argument error, never undefined behaviour): true when (stored value) OP (given value),
 * comparing bytes lexicographically (a shorter prefix is smaller). A missing
 * xattr compares as the empty value; a missing object fails the guard with
 * -ENOENT. */
typedef enum strata_cmp_op {
  STRATA_CMP_EQ = 1,
  STRATA_CMP_NE = 2,
  STRATA_CMP_GT = 3,
  STRATA_CMP_GE = 4,
  STRATA_CMP_LT = 5,
  STRATA_CMP_LE = 6
} strata_cmp_op;

/* A write op: steps applied in order to one object, atomically (all or
 * nothing), acknowledged once durable everywhere. Guards fail the whole op
 * before anything is applied: assert_exists -ENOENT, assert_version -ERANGE
 * (a missing object has version 0), cmpxattr -ECANCELED. Guards and reads in
 * a write op see the object as it was before the op. Data passed to a step is copied, so the
 * caller's buffers may be reused as soon as the step call returns.
 * Argument errors (NULL name, too much data) are remembered and make operate
 * fail with -EINVAL / -E2BIG. An op may be operated more than once. */
STRATA_CLIENT_API strata_write_op_t strata_write_op_new(void);  /* NULL on ENOMEM */
STRATA_CLIENT_API void strata_write_op_release(strata_write_op_t op);

STRATA_CLIENT_API void strata_write_op_assert_exists(strata_write_op_t op);
STRATA_CLIENT_API void strata_write_op_assert_version(strata_write_op_t op, uint64_t version);
STRATA_CLIENT_API void strata_write_op_cmpxattr(strata_write_op_t op, const char *name,
                                                int cmp, const void *value, size_t len);
/* exclusive != 0: -EEXIST if the object exists. */
STRATA_CLIENT_API void strata_write_op_create(strata_write_op_t op, int exclusive);
STRATA_CLIENT_API void strata_write_op_write(strata_write_op_t op, const void *buf, size_t len,
                                             uint64_t off);
STRATA_CLIENT_API void strata_write_op_write_full(strata_write_op_t op, const void *buf,
                                                  size_t len);
STRATA_CLIENT_API void strata_write_op_append(strata_write_op_t op, const void *buf, size_t len);
STRATA_CLIENT_API void strata_write_op_truncate(strata_write_op_t op, uint64_t size);
STRATA_CLIENT_API void strata_write_op_zero(strata_write_op_t op, uint64_t off, uint64_t len);
STRATA_CLIENT_API void strata_write_op_remove(strata_write_op_t op);
STRATA_CLIENT_API void strata_write_op_setxattr(strata_write_op_t op, const char *name,
                                                const void *value, size_t len);
STRATA_CLIENT_API void strata_write_op_rmxattr(strata_write_op_t op, const char *name);
STRATA_CLIENT_API void strata_write_op_omap_set(strata_write_op_t op, const strata_bytes *keys,
                                                const strata_bytes *values, size_t n);
STRATA_CLIENT_API void strata_write_op_omap_rm_keys(strata_write_op_t op,
                                                    const strata_bytes *keys, size_t n);
STRATA_CLIENT_API void strata_write_op_omap_rm_range(strata_write_op_t op, const void *first,
                                                     size_t first_len, const void *end,
                                                     size_t end_len);
STRATA_CLIENT_API void strata_write_op_omap_clear(strata_write_op_t op);
STRATA_CLIENT_API void strata_write_op_omap_set_header(strata_write_op_t op, const void *buf,
                                                       size_t len);
/* Number of steps added so far (guards included). */
STRATA_CLIENT_API size_t strata_write_op_size(strata_write_op_t op);
/* (1.1) Names the op's write with the caller's request id: 1..128 bytes of
 * text, unique per intended write (e.g. "backup-7/chunk-42/attempt-group-1"),
 * the same on every retry of that write. The OSDs apply a write with a
 * given id at most once per object, whichever client instance sends it and
 * in whatever order attempts arrive; an attempt after the first is answered
 * with the first one's result and version (see the top of this file for
 * learning the outcome of a timed-out write). The deduplication lasts as
 * long as the object's placement group keeps the write in its log (its
 * newest osd_pg_log_entries writes, 3,000 by default), so retry promptly.
 * 0, or -EINVAL for a NULL op or an id that is empty or too long. */
STRATA_CLIENT_API int strata_write_op_set_request_id(strata_write_op_t op, const char *id);

/* Runs the op on object oid. 0 or the failing step's errno. On success and
 * when version is not NULL, *version is the object's version after the op.
 * An op with no steps succeeds without contacting the cluster (*version 0);
 * strata_aio_*_op_operate refuses one with -EINVAL. */
STRATA_CLIENT_API int strata_write_op_operate(strata_write_op_t op, strata_ioctx_t io,
                                              const char *oid, uint64_t *version);

/* A read op: guards and reads run in order on one consistent state of the
 * object; the first failing step ends it. Output pointers given to the steps
 * must stay valid until operate returns (or the completion completes).
 * Each step's own result goes to its prval (if not NULL): 0 or a negative
 * errno; steps after a failing one get -ECANCELED. */
STRATA_CLIENT_API strata_read_op_t strata_read_op_new(void);
STRATA_CLIENT_API void strata_read_op_release(strata_read_op_t op);

STRATA_CLIENT_API void strata_read_op_assert_exists(strata_read_op_t op);
STRATA_CLIENT_API void strata_read_op_assert_version(strata_read_op_t op, uint64_t version);
STRATA_CLIENT_API void strata_read_op_cmpxattr(strata_read_op_t op, const char *name,
                                               int cmp, const void *value, size_t len);
/* Reads up to len bytes at off into buf; *bytes_read gets the count. */
STRATA_CLIENT_API void strata_read_op_read(strata_read_op_t op, uint64_t off, size_t len,
                                           void *buf, size_t *bytes_read, int *prval);
STRATA_CLIENT_API void strata_read_op_stat(strata_read_op_t op, strata_obj_stat *out,
                                           int *prval);
/* Copies at most len bytes of the value; *value_len gets its full length. */
STRATA_CLIENT_API void strata_read_op_getxattr(strata_read_op_t op, const char *name, void *buf,
                                               size_t len, size_t *value_len, int *prval);
/* *iter is set (and must be ended by the caller) when the step succeeds. */
STRATA_CLIENT_API void strata_read_op_getxattrs(strata_read_op_t op, strata_xattr_iter_t *iter,
                                                int *prval);
STRATA_CLIENT_API void strata_read_op_omap_get_keys(strata_read_op_t op, const strata_bytes *keys,
                                                    size_t n, strata_omap_iter_t *iter,
                                                    int *prval);
STRATA_CLIENT_API void strata_read_op_omap_list(strata_read_op_t op, const void *start_after,
                                                size_t start_after_len, const void *end,
                                                size_t end_len, uint32_t max,
                                                strata_omap_iter_t *iter, int *prval);
STRATA_CLIENT_API void strata_read_op_omap_get_header(strata_read_op_t op, void *buf, size_t len,
                                                      size_t *header_len, int *prval);
STRATA_CLIENT_API size_t strata_read_op_size(strata_read_op_t op);

/* Runs the op on oid. 0 when every step succeeded, else the first failing
 * step's errno. *version (if not NULL) gets the object's version as read. */
STRATA_CLIENT_API int strata_read_op_operate(strata_read_op_t op, strata_ioctx_t io,
                                             const char *oid, uint64_t *version);

/* ======================================================================== */
/* Asynchronous calls                                                        */

/* Called once when the call completes, on a library thread. It may read the
 * completion, release it, and start other asynchronous calls; it must not
 * block, wait on a completion, or make synchronous calls (those return
 * -EDEADLK there). */
typedef void (*strata_callback_t)(strata_completion_t c, void *arg);

/* A completion for ONE asynchronous call (reuse gives -EBUSY). cb may be
 * NULL. The caller owns *out and releases it with strata_completion_release,
 * which may come before the call completes (the library keeps what it needs
 * until then). */
STRATA_CLIENT_API int strata_completion_create(strata_callback_t cb, void *arg,
                                               strata_completion_t *out);
/* Blocks until the call completed and its callback returned; returns the
 * call's return value. -EINVAL for a completion never passed to a call. */
STRATA_CLIENT_API int64_t strata_completion_wait(strata_completion_t c);
/* 1 once the result is available (already true inside the callback). */
STRATA_CLIENT_API int strata_completion_is_complete(strata_completion_t c);
/* What the synchronous form would have returned: 0 / bytes read / -errno. */
STRATA_CLIENT_API int64_t strata_completion_get_return_value(strata_completion_t c);
/* The object's version after the write (or as read); 0 if unknown. */
STRATA_CLIENT_API uint64_t strata_completion_get_version(strata_completion_t c);
STRATA_CLIENT_API void strata_completion_release(strata_completion_t c);

/* Each returns 0 when the call was started (the completion will complete)
 * or a negative errno when it was not (the completion stays unused).
 * Data to write is copied before the call returns; read buffers and output
 * structs must stay valid until completion. */
STRATA_CLIENT_API int strata_aio_write(strata_ioctx_t io, const char *oid, strata_completion_t c,
                                       const void *buf, size_t len, uint64_t off);
STRATA_CLIENT_API int strata_aio_write_full(strata_ioctx_t io, const char *oid,
                                            strata_completion_t c, const void *buf, size_t len);
STRATA_CLIENT_API int strata_aio_append(strata_ioctx_t io, const char *oid, strata_completion_t c,
                                        const void *buf, size_t len);
STRATA_CLIENT_API int strata_aio_read(strata_ioctx_t io, const char *oid, strata_completion_t c,
                                      void *buf, size_t len, uint64_t off);
STRATA_CLIENT_API int strata_aio_stat(strata_ioctx_t io, const char *oid, strata_completion_t c,
                                      strata_obj_stat *out);
STRATA_CLIENT_API int strata_aio_remove(strata_ioctx_t io, const char *oid,
                                        strata_completion_t c);
/* The op may be released or reused once this returns. */
STRATA_CLIENT_API int strata_aio_write_op_operate(strata_write_op_t op, strata_ioctx_t io,
                                                  const char *oid, strata_completion_t c);
/* The op must live until the completion completes. */
STRATA_CLIENT_API int strata_aio_read_op_operate(strata_read_op_t op, strata_ioctx_t io,
                                                 const char *oid, strata_completion_t c);
/* Waits until every asynchronous call started on io so far has completed
 * (callbacks included). */
STRATA_CLIENT_API int strata_aio_flush(strata_ioctx_t io);

/* ======================================================================== */
/* Administrative commands                                                   */

typedef struct strata_cmd_arg {
  const char *key;
  const char *value;
} strata_cmd_arg;

/* Sends a command to the monitor: prefix ("status", "osd tree", "pool set",
 * ...) and named arguments, e.g. {"name","rbd"},{"key","size"},{"value","2"}.
 * Returns the monitor's result (0 or -errno). *out_message (human text; the
 * error when the result is negative) and *out_json are allocated by the
 * library, NUL-terminated, and freed with strata_buffer_free; either output
 * pointer (and length pointer) may be NULL. When a command changed the map,
 * the call returns once this client holds the new map. */
STRATA_CLIENT_API int strata_mon_command(strata_cluster_t c, const char *prefix,
                                         const strata_cmd_arg *args, size_t n_args,
                                         char **out_message, size_t *out_message_len,
                                         char **out_json, size_t *out_json_len);

/* PG commands go to the PG's primary OSD. */
#define STRATA_PG_SCRUB_DEEP (1u << 0)  /* compare replica checksums, not just metadata */
#define STRATA_PG_REPAIR (1u << 1)      /* fix replicas that differ from the authoritative copy */

/* Scrubs (or repairs) placement group pool.seed; outputs as for
 * strata_mon_command. */
STRATA_CLIENT_API int strata_pg_command(strata_cluster_t c, uint32_t pool, uint32_t seed,
                                        uint32_t flags, char **out_message,
                                        size_t *out_message_len, char **out_json,
                                        size_t *out_json_len);

/* Frees a buffer the library allocated. NULL is a no-op. */
STRATA_CLIENT_API void strata_buffer_free(void *buf);

/* Service sessions (client API 1.2, ABI 1.3). A client talks to a cluster
 * daemon that is neither the monitor nor an OSD -- the metadata server of a
 * filesystem -- over the cluster's messenger, authenticated as this client.
 * The library finds the service's active instance in the cluster map,
 * connects, and follows it: when the map names another instance (a
 * failover) or the connection breaks, it reconnects to whoever is active
 * and reports STRATA_SESSION_CONNECTED again. What to resend after a
 * reconnect is the service protocol's business (the filesystem's:
 * sdk/proto/fs.capnp, docs/FILESYSTEM.md). */
typedef struct strata_session *strata_session_t;

/* Events of a session's callback. */
#define STRATA_SESSION_CONNECTED 1    /* connected to an instance: payload is its name, "mds.a" */
#define STRATA_SESSION_MESSAGE 2      /* a message from the instance: type and payload */
#define STRATA_SESSION_DISCONNECTED 3 /* lost it (payload: why); the library keeps looking */

/* Message types a session carries: the service range of the messenger. */
#define STRATA_SESSION_TYPE_FIRST 1024u
#define STRATA_SESSION_TYPE_LAST 2047u

/* Runs on a library thread, one event at a time and in order, never before
 * strata_session_open has returned (so it may use the handle stored in
 * *out) and never after strata_session_close returns. payload is valid
 * during the call only. It must not block for long; it may call
 * strata_session_send. */
typedef void (*strata_session_cb)(void *arg, int event, uint32_t type, const void *payload,
                                  size_t len);

/* Opens a session with `service` ("mds") for `target` (the filesystem's
 * name). Returns 0 at once and connects in the background (the callback
 * reports CONNECTED), -ENOENT when the map has no such target, -EINVAL for
 * an unknown service. */
STRATA_CLIENT_API int strata_session_open(strata_cluster_t c, const char *service,
                                          const char *target, strata_session_cb cb, void *arg,
                                          strata_session_t *out);

/* Queues one message for the connected instance. Messages queued on one
 * connection arrive in order. -ENOTCONN while no instance is connected
 * (wait for CONNECTED and send again), -EINVAL for a type outside the
 * session range, -EMSGSIZE for a payload over the messenger's limit. */
STRATA_CLIENT_API int strata_session_send(strata_session_t s, uint32_t type, const void *payload,
                                          size_t len);

/* The connected instance as JSON {"name","addr","connected","reconnects"},
 * with the buffer conventions of strata_cluster_fsid. */
STRATA_CLIENT_API int64_t strata_session_status(strata_session_t s, char *buf, size_t len);

/* Closes the session; once it returns no callback runs. NULL is a no-op. */
STRATA_CLIENT_API void strata_session_close(strata_session_t s);

/* ======================================================================== */
/* Object snapshots (client API 1.3)                                         */
/*
 * Self-managed snapshots, as block images use them: the caller hands out
 * snapshot ids (growing: 1, 2, 3, ...) and keeps the list of the live ones
 * itself (a block image keeps it in its header). The OSDs keep, per object,
 * the object as it was before its first change after each snapshot: a
 * "clone", made by the object store's CLONE (shared extents on the backends
 * that can, a copy on the others) in the same transaction as the change, on
 * every replica. Taking a snapshot therefore costs nothing but handing out
 * its id; the first write to an object after it preserves the old content.
 *
 * An object's snapshot state (its "snap set"): seq, the newest snapshot it
 * has been preserved for, and its clones, each with the id of the newest
 * snapshot it serves, whether the object existed then, and its size. Clone
 * C serves the snapshots s with (previous clone's id) < s <= C. A snapshot
 * s newer than every clone (s > the newest clone id) sees the object as it
 * is. Clones belong to the object's placement group: they are replicated,
 * recovered and scrubbed with it, never listed by strata_list_*, and they
 * outlive the object (removing an object keeps its clones until trimmed).
 */

/* Before the op's other steps change the object: when the object has not
 * been preserved for snapshot `seq` yet (its snap set's seq < seq), keep it
 * as it is now for every snapshot up to seq -- a clone when it exists, an
 * "absent" entry when it does not -- and raise its seq to seq. The other
 * steps then apply to the object as usual. seq 0 does nothing. Add it as the
 * op's first step; an op that carries it is not pipelined behind earlier
 * writes to the object (it reads the snap set), so a caller that knows the
 * object is preserved for seq already (a previous op with the same seq
 * succeeded) should leave it out. */
STRATA_CLIENT_API void strata_write_op_snap_context(strata_write_op_t op, uint64_t seq);

/* Drops every clone that no snapshot in keep[0..n) (the live snapshot ids,
 * any order) is served by, and the snap set itself when no clone is left.
 * Succeeds on an object without clones, existing or not (does not create
 * it). */
STRATA_CLIENT_API void strata_write_op_snap_trim(strata_write_op_t op, const uint64_t *keep,
                                                 size_t n);

/* Makes the object what it was at snapshot snapid: its data, xattrs and
 * omap from the clone serving snapid, or removed when it did not exist
 * then; nothing when snapid is newer than every clone. Clones are kept.
 * To keep the current content for the snapshots after snapid, put
 * strata_write_op_snap_context(seq) first. snapid 0 is -EINVAL. */
STRATA_CLIENT_API void strata_write_op_snap_rollback(strata_write_op_t op, uint64_t snapid);

/* Every step of the read op sees the object as it was at snapshot snapid:
 * -ENOENT (from the first step that needs the object) when it did not
 * exist then; snapid 0 (the default) is the object as it is. *version of
 * operate is the version the object had then. */
STRATA_CLIENT_API void strata_read_op_set_snap(strata_read_op_t op, uint64_t snapid);

typedef struct strata_snap_clone {
  uint64_t id;     /* the newest snapshot this clone serves */
  uint64_t size;   /* data size then (0 when absent) */
  int exists;      /* 0: the object did not exist for these snapshots */
} strata_snap_clone;

/* The object's snap set: *seq, and up to max clones (oldest first) into
 * clones; *n gets how many there are (call again with more room when
 * *n > max). An object with no snap set gives *seq 0, *n 0 and succeeds
 * whether the object exists or not. Not combinable with set_snap. */
STRATA_CLIENT_API void strata_read_op_list_snaps(strata_read_op_t op, uint64_t *seq,
                                                 strata_snap_clone *clones, size_t max,
                                                 size_t *n, int *prval);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_CLIENT_H */
