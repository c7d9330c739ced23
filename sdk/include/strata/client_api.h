/*
 * The client routine table (ABI 1.3): the whole client API of
 * strata/client.h as one struct of function pointers, built by the host from
 * the client library it runs and handed to plugins that talk to the cluster
 * (frontends: strata/frontend.h). Model: SQLite's sqlite3_api_routines.
 *
 * A plugin that calls through the table links nothing of the client library:
 * one process has one client, one cluster connection and one map
 * subscription, the host's. Each routine behaves exactly as the function of
 * the same name (with the strata_ prefix) that client.h documents: same
 * arguments, results, threading and ownership. strata/frontend_client.h
 * maps the usual strata_* names onto the table, so plugin code reads like
 * client code.
 *
 * Layout rules:
 *   - struct_size comes first; the host sets it to the size of the table it
 *     filled. A routine lies past struct_size when the host is older than
 *     the header the plugin was built with: check with
 *     STRATA_CLIENT_API_HAS(table, routine) before calling a routine added
 *     after the table's first version (1.3).
 *   - One pointer per call of client.h, named as the call without "strata_".
 *     A call added to client.h gets its pointer appended at the END of the
 *     table (never inserted, never reordered, never removed), whatever its
 *     place in client.h; tests/frontend checks that every call of client.h
 *     has its routine here and that the 1.3 order is kept.
 *   - Every pointer up to struct_size is set; the host never hands out a
 *     table with a NULL routine.
 *   - The table is the host's static storage, valid while the plugin is
 *     loaded; plugins only read it.
 *
 * History (appended to only):
 *   1.3  the table: client API 1.1 (every call of client.h, request ids
 *        included).
 *   1.3  + client API 1.2: session_open, session_send, session_status,
 *        session_close (check with STRATA_CLIENT_API_HAS).
 *   1.3  + client API 1.3: write_op_snap_context, write_op_snap_trim,
 *        write_op_snap_rollback, read_op_set_snap, read_op_list_snaps
 *        (check with STRATA_CLIENT_API_HAS).
 */
#ifndef STRATA_CLIENT_API_H
#define STRATA_CLIENT_API_H

#include <stddef.h>

#include "strata/client.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_client_api {
  uint32_t struct_size; /* bytes of the table the host filled */
  uint32_t reserved0;
  void (*client_version)(int *major, int *minor);
  const char *(*last_error)(void);

  /* Cluster handle */
  int (*cluster_create)(const strata_cluster_args *args, strata_cluster_t *out);
  int (*cluster_conf_set)(strata_cluster_t c, const char *key, const char *value);
  int64_t (*cluster_conf_get)(strata_cluster_t c, const char *key, char *buf, size_t len);
  int (*cluster_connect)(strata_cluster_t c, uint32_t timeout_ms);
  void (*cluster_shutdown)(strata_cluster_t c);
  int64_t (*cluster_instance_id)(strata_cluster_t c, char *buf, size_t len);
  int64_t (*cluster_fsid)(strata_cluster_t c, char *buf, size_t len);
  uint64_t (*cluster_map_epoch)(strata_cluster_t c);
  int (*cluster_wait_for_epoch)(strata_cluster_t c, uint64_t epoch, uint32_t timeout_ms);

  /* Pools */
  int64_t (*pool_list)(strata_cluster_t c, char *buf, size_t len);
  int (*pool_create)(strata_cluster_t c, const char *name, const strata_pool_args *args);
  int (*pool_delete)(strata_cluster_t c, const char *name);
  int64_t (*pool_lookup)(strata_cluster_t c, const char *name);
  int (*pool_get_info)(strata_cluster_t c, const char *name, strata_pool_info *out);

  /* I/O contexts */
  int (*ioctx_create)(strata_cluster_t c, const char *pool, strata_ioctx_t *out);
  int (*ioctx_create_by_id)(strata_cluster_t c, int64_t pool_id, strata_ioctx_t *out);
  void (*ioctx_destroy)(strata_ioctx_t io);
  int64_t (*ioctx_pool_id)(strata_ioctx_t io);
  int (*object_locate)(strata_ioctx_t io, const char *oid, strata_object_location *out);

  /* Object I/O */
  int (*write)(strata_ioctx_t io, const char *oid, const void *buf, size_t len, uint64_t off);
  int (*write_full)(strata_ioctx_t io, const char *oid, const void *buf, size_t len);
  int (*append)(strata_ioctx_t io, const char *oid, const void *buf, size_t len);
  int64_t (*read)(strata_ioctx_t io, const char *oid, void *buf, size_t len, uint64_t off);
  int (*stat)(strata_ioctx_t io, const char *oid, strata_obj_stat *out);
  int (*remove)(strata_ioctx_t io, const char *oid);
  int (*truncate)(strata_ioctx_t io, const char *oid, uint64_t size);
  int (*zero)(strata_ioctx_t io, const char *oid, uint64_t off, uint64_t len);
  int (*create)(strata_ioctx_t io, const char *oid, int exclusive);

  /* Xattrs */
  int64_t (*getxattr)(strata_ioctx_t io, const char *oid, const char *name, void *buf, size_t len);
  int (*setxattr)(strata_ioctx_t io, const char *oid, const char *name, const void *value,
                  size_t len);
  int (*rmxattr)(strata_ioctx_t io, const char *oid, const char *name);
  int (*getxattrs)(strata_ioctx_t io, const char *oid, strata_xattr_iter_t *iter);
  int (*xattr_iter_next)(strata_xattr_iter_t iter, const char **name, const void **value,
                         size_t *len);
  void (*xattr_iter_end)(strata_xattr_iter_t iter);

  /* Omap */
  int (*omap_get_keys)(strata_ioctx_t io, const char *oid, const strata_bytes *keys, size_t n,
                       strata_omap_iter_t *iter);
  int (*omap_list)(strata_ioctx_t io, const char *oid, const void *start_after,
                   size_t start_after_len, const void *end, size_t end_len, uint32_t max,
                   strata_omap_iter_t *iter);
  int (*omap_iter_next)(strata_omap_iter_t iter, const void **key, size_t *key_len,
                        const void **value, size_t *value_len);
  size_t (*omap_iter_size)(strata_omap_iter_t iter);
  int (*omap_iter_more)(strata_omap_iter_t iter);
  void (*omap_iter_end)(strata_omap_iter_t iter);
  int (*omap_set)(strata_ioctx_t io, const char *oid, const strata_bytes *keys,
                  const strata_bytes *values, size_t n);
  int (*omap_rm_keys)(strata_ioctx_t io, const char *oid, const strata_bytes *keys, size_t n);
  int (*omap_rm_range)(strata_ioctx_t io, const char *oid, const void *first, size_t first_len,
                       const void *end, size_t end_len);
  int (*omap_clear)(strata_ioctx_t io, const char *oid);
  int64_t (*omap_get_header)(strata_ioctx_t io, const char *oid, void *buf, size_t len);
  int (*omap_set_header)(strata_ioctx_t io, const char *oid, const void *buf, size_t len);

  /* Listing the objects of a pool */
  int (*list_open)(strata_ioctx_t io, const char *cursor, strata_list_t *out);
  int (*list_next)(strata_list_t l, const char **oid, size_t *len);
  int64_t (*list_cursor)(strata_list_t l, char *buf, size_t len);
  void (*list_close)(strata_list_t l);

  /* Compound operations */
  strata_write_op_t (*write_op_new)(void);
  void (*write_op_release)(strata_write_op_t op);
  void (*write_op_assert_exists)(strata_write_op_t op);
  void (*write_op_assert_version)(strata_write_op_t op, uint64_t version);
  void (*write_op_cmpxattr)(strata_write_op_t op, const char *name, int cmp, const void *value,
                            size_t len);
  void (*write_op_create)(strata_write_op_t op, int exclusive);
  void (*write_op_write)(strata_write_op_t op, const void *buf, size_t len, uint64_t off);
  void (*write_op_write_full)(strata_write_op_t op, const void *buf, size_t len);
  void (*write_op_append)(strata_write_op_t op, const void *buf, size_t len);
  void (*write_op_truncate)(strata_write_op_t op, uint64_t size);
  void (*write_op_zero)(strata_write_op_t op, uint64_t off, uint64_t len);
  void (*write_op_remove)(strata_write_op_t op);
  void (*write_op_setxattr)(strata_write_op_t op, const char *name, const void *value, size_t len);
  void (*write_op_rmxattr)(strata_write_op_t op, const char *name);
  void (*write_op_omap_set)(strata_write_op_t op, const strata_bytes *keys,
                            const strata_bytes *values, size_t n);
  void (*write_op_omap_rm_keys)(strata_write_op_t op, const strata_bytes *keys, size_t n);
  void (*write_op_omap_rm_range)(strata_write_op_t op, const void *first, size_t first_len,
                                 const void *end, size_t end_len);
  void (*write_op_omap_clear)(strata_write_op_t op);
  void (*write_op_omap_set_header)(strata_write_op_t op, const void *buf, size_t len);
  size_t (*write_op_size)(strata_write_op_t op);
  int (*write_op_set_request_id)(strata_write_op_t op, const char *id);
  int (*write_op_operate)(strata_write_op_t op, strata_ioctx_t io, const char *oid,
                          uint64_t *version);
  strata_read_op_t (*read_op_new)(void);
  void (*read_op_release)(strata_read_op_t op);
  void (*read_op_assert_exists)(strata_read_op_t op);
  void (*read_op_assert_version)(strata_read_op_t op, uint64_t version);
  void (*read_op_cmpxattr)(strata_read_op_t op, const char *name, int cmp, const void *value,
                           size_t len);
  void (*read_op_read)(strata_read_op_t op, uint64_t off, size_t len, void *buf, size_t *bytes_read,
                       int *prval);
  void (*read_op_stat)(strata_read_op_t op, strata_obj_stat *out, int *prval);
  void (*read_op_getxattr)(strata_read_op_t op, const char *name, void *buf, size_t len,
                           size_t *value_len, int *prval);
  void (*read_op_getxattrs)(strata_read_op_t op, strata_xattr_iter_t *iter, int *prval);
  void (*read_op_omap_get_keys)(strata_read_op_t op, const strata_bytes *keys, size_t n,
                                strata_omap_iter_t *iter, int *prval);
  void (*read_op_omap_list)(strata_read_op_t op, const void *start_after, size_t start_after_len,
                            const void *end, size_t end_len, uint32_t max, strata_omap_iter_t *iter,
                            int *prval);
  void (*read_op_omap_get_header)(strata_read_op_t op, void *buf, size_t len, size_t *header_len,
                                  int *prval);
  size_t (*read_op_size)(strata_read_op_t op);
  int (*read_op_operate)(strata_read_op_t op, strata_ioctx_t io, const char *oid,
                         uint64_t *version);

  /* Asynchronous calls */
  int (*completion_create)(strata_callback_t cb, void *arg, strata_completion_t *out);
  int64_t (*completion_wait)(strata_completion_t c);
  int (*completion_is_complete)(strata_completion_t c);
  int64_t (*completion_get_return_value)(strata_completion_t c);
  uint64_t (*completion_get_version)(strata_completion_t c);
  void (*completion_release)(strata_completion_t c);
  int (*aio_write)(strata_ioctx_t io, const char *oid, strata_completion_t c, const void *buf,
                   size_t len, uint64_t off);
  int (*aio_write_full)(strata_ioctx_t io, const char *oid, strata_completion_t c, const void *buf,
                        size_t len);
  int (*aio_append)(strata_ioctx_t io, const char *oid, strata_completion_t c, const void *buf,
                    size_t len);
  int (*aio_read)(strata_ioctx_t io, const char *oid, strata_completion_t c, void *buf, size_t len,
                  uint64_t off);
  int (*aio_stat)(strata_ioctx_t io, const char *oid, strata_completion_t c, strata_obj_stat *out);
  int (*aio_remove)(strata_ioctx_t io, const char *oid, strata_completion_t c);
  int (*aio_write_op_operate)(strata_write_op_t op, strata_ioctx_t io, const char *oid,
                              strata_completion_t c);
  int (*aio_read_op_operate)(strata_read_op_t op, strata_ioctx_t io, const char *oid,
                             strata_completion_t c);
  int (*aio_flush)(strata_ioctx_t io);

  /* Administrative commands */
  int (*mon_command)(strata_cluster_t c, const char *prefix, const strata_cmd_arg *args,
                     size_t n_args, char **out_message, size_t *out_message_len, char **out_json,
                     size_t *out_json_len);
  int (*pg_command)(strata_cluster_t c, uint32_t pool, uint32_t seed, uint32_t flags,
                    char **out_message, size_t *out_message_len, char **out_json,
                    size_t *out_json_len);
  void (*buffer_free)(void *buf);

  /* Client API 1.2: service sessions. */
  int (*session_open)(strata_cluster_t c, const char *service, const char *target,
                      strata_session_cb cb, void *arg, strata_session_t *out);
  int (*session_send)(strata_session_t s, uint32_t type, const void *payload, size_t len);
  int64_t (*session_status)(strata_session_t s, char *buf, size_t len);
  void (*session_close)(strata_session_t s);

  /* Client API 1.3: object snapshots. */
  void (*write_op_snap_context)(strata_write_op_t op, uint64_t seq);
  void (*write_op_snap_trim)(strata_write_op_t op, const uint64_t *keep, size_t n);
  void (*write_op_snap_rollback)(strata_write_op_t op, uint64_t snapid);
  void (*read_op_set_snap)(strata_read_op_t op, uint64_t snapid);
  void (*read_op_list_snaps)(strata_read_op_t op, uint64_t *seq, strata_snap_clone *clones,
                             size_t max, size_t *n, int *prval);

  /* New routines go here, at the end, whatever their place in client.h. */
} strata_client_api;

/* True when the table holds `routine` (its slot lies within struct_size). */
#define STRATA_CLIENT_API_HAS(table, routine) \
  ((table) != NULL &&                         \
   (table)->struct_size >= offsetof(strata_client_api, routine) + sizeof((table)->routine))

#ifdef __cplusplus
}
#endif

#endif /* STRATA_CLIENT_API_H */
