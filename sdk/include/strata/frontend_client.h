/*
 * The strata_* client names, called through the client routine table
 * (strata/client_api.h) instead of the client library. Model: SQLite's
 * sqlite3ext.h.
 *
 * A frontend includes this header instead of strata/client.h and writes
 * ordinary client code:
 *
 *   #include "strata/frontend.h"
 *   #include "strata/frontend_client.h"
 *
 *   int save(const strata_client_api *strata_api, strata_ioctx_t io) {
 *     return strata_write_full(io, "greeting", "hello", 5);
 *   }
 *
 * Each strata_NAME(...) below expands to strata_api->NAME(...), where
 * strata_api is whatever the code in scope calls strata_api: a parameter or
 * local as above, a member of the plugin's instance (inside its member
 * functions), or a file-scope `static const strata_client_api *strata_api`
 * set from the host table given to start(). The host's table stays valid
 * while the plugin is loaded, so any of these may keep it.
 *
 * client.h is included (through client_api.h) before the names are
 * defined, so its types and constants are all available and its
 * declarations stay plain declarations that nothing references: a plugin
 * built with this header has no undefined strata_* symbols and links no
 * client library. Calls of client.h added after the table's first version
 * may be absent from an older host's table: test them with
 * STRATA_CLIENT_API_HAS(strata_api, NAME) first.
 *
 * A frontend runs inside the host's cluster connection: it must not call
 * strata_cluster_shutdown on the cluster handle start() received (the host
 * shuts it down after stop()), and it releases every ioctx, op, iterator,
 * listing and completion it made before its stop() returns.
 */
#ifndef STRATA_FRONTEND_CLIENT_H
#define STRATA_FRONTEND_CLIENT_H

#include "strata/client_api.h"

/* One line per routine of strata_client_api, in the table's order;
 * tests/frontend checks that none is missing. */
#define strata_client_version strata_api->client_version
#define strata_last_error strata_api->last_error
#define strata_cluster_create strata_api->cluster_create
#define strata_cluster_conf_set strata_api->cluster_conf_set
#define strata_cluster_conf_get strata_api->cluster_conf_get
#define strata_cluster_connect strata_api->cluster_connect
#define strata_cluster_shutdown strata_api->cluster_shutdown
#define strata_cluster_instance_id strata_api->cluster_instance_id
#define strata_cluster_fsid strata_api->cluster_fsid
#define strata_cluster_map_epoch strata_api->cluster_map_epoch
#define strata_cluster_wait_for_epoch strata_api->cluster_wait_for_epoch
#define strata_pool_list strata_api->pool_list
#define strata_pool_create strata_api->pool_create
#define strata_pool_delete strata_api->pool_delete
#define strata_pool_lookup strata_api->pool_lookup
#define strata_pool_get_info strata_api->pool_get_info
#define strata_ioctx_create strata_api->ioctx_create
#define strata_ioctx_create_by_id strata_api->ioctx_create_by_id
#define strata_ioctx_destroy strata_api->ioctx_destroy
#define strata_ioctx_pool_id strata_api->ioctx_pool_id
#define strata_object_locate strata_api->object_locate
#define strata_write strata_api->write
#define strata_write_full strata_api->write_full
#define strata_append strata_api->append
#define strata_read strata_api->read
#define strata_stat strata_api->stat
#define strata_remove strata_api->remove
#define strata_truncate strata_api->truncate
#define strata_zero strata_api->zero
#define strata_create strata_api->create
#define strata_getxattr strata_api->getxattr
#define strata_setxattr strata_api->setxattr
#define strata_rmxattr strata_api->rmxattr
#define strata_getxattrs strata_api->getxattrs
#define strata_xattr_iter_next strata_api->xattr_iter_next
#define strata_xattr_iter_end strata_api->xattr_iter_end
#define strata_omap_get_keys strata_api->omap_get_keys
#define strata_omap_list strata_api->omap_list
#define strata_omap_iter_next strata_api->omap_iter_next
#define strata_omap_iter_size strata_api->omap_iter_size
#define strata_omap_iter_more strata_api->omap_iter_more
#define strata_omap_iter_end strata_api->omap_iter_end
#define strata_omap_set strata_api->omap_set
#define strata_omap_rm_keys strata_api->omap_rm_keys
#define strata_omap_rm_range strata_api->omap_rm_range
#define strata_omap_clear strata_api->omap_clear
#define strata_omap_get_header strata_api->omap_get_header
#define strata_omap_set_header strata_api->omap_set_header
#define strata_list_open strata_api->list_open
#define strata_list_next strata_api->list_next
#define strata_list_cursor strata_api->list_cursor
#define strata_list_close strata_api->list_close
#define strata_write_op_new strata_api->write_op_new
#define strata_write_op_release strata_api->write_op_release
#define strata_write_op_assert_exists strata_api->write_op_assert_exists
#define strata_write_op_assert_version strata_api->write_op_assert_version
#define strata_write_op_cmpxattr strata_api->write_op_cmpxattr
#define strata_write_op_create strata_api->write_op_create
#define strata_write_op_write strata_api->write_op_write
#define strata_write_op_write_full strata_api->write_op_write_full
#define strata_write_op_append strata_api->write_op_append
#define strata_write_op_truncate strata_api->write_op_truncate
#define strata_write_op_zero strata_api->write_op_zero
#define strata_write_op_remove strata_api->write_op_remove
#define strata_write_op_setxattr strata_api->write_op_setxattr
#define strata_write_op_rmxattr strata_api->write_op_rmxattr
#define strata_write_op_omap_set strata_api->write_op_omap_set
#define strata_write_op_omap_rm_keys strata_api->write_op_omap_rm_keys
#define strata_write_op_omap_rm_range strata_api->write_op_omap_rm_range
#define strata_write_op_omap_clear strata_api->write_op_omap_clear
#define strata_write_op_omap_set_header strata_api->write_op_omap_set_header
#define strata_write_op_size strata_api->write_op_size
#define strata_write_op_set_request_id strata_api->write_op_set_request_id
#define strata_write_op_operate strata_api->write_op_operate
#define strata_read_op_new strata_api->read_op_new
#define strata_read_op_release strata_api->read_op_release
#define strata_read_op_assert_exists strata_api->read_op_assert_exists
#define strata_read_op_assert_version strata_api->read_op_assert_version
#define strata_read_op_cmpxattr strata_api->read_op_cmpxattr
#define strata_read_op_read strata_api->read_op_read
#define strata_read_op_stat strata_api->read_op_stat
#define strata_read_op_getxattr strata_api->read_op_getxattr
#define strata_read_op_getxattrs strata_api->read_op_getxattrs
#define strata_read_op_omap_get_keys strata_api->read_op_omap_get_keys
#define strata_read_op_omap_list strata_api->read_op_omap_list
#define strata_read_op_omap_get_header strata_api->read_op_omap_get_header
#define strata_read_op_size strata_api->read_op_size
#define strata_read_op_operate strata_api->read_op_operate
#define strata_completion_create strata_api->completion_create
#define strata_completion_wait strata_api->completion_wait
#define strata_completion_is_complete strata_api->completion_is_complete
#define strata_completion_get_return_value strata_api->completion_get_return_value
#define strata_completion_get_version strata_api->completion_get_version
#define strata_completion_release strata_api->completion_release
#define strata_aio_write strata_api->aio_write
#define strata_aio_write_full strata_api->aio_write_full
#define strata_aio_append strata_api->aio_append
#define strata_aio_read strata_api->aio_read
#define strata_aio_stat strata_api->aio_stat
#define strata_aio_remove strata_api->aio_remove
#define strata_aio_write_op_operate strata_api->aio_write_op_operate
#define strata_aio_read_op_operate strata_api->aio_read_op_operate
#define strata_aio_flush strata_api->aio_flush
#define strata_mon_command strata_api->mon_command
#define strata_pg_command strata_api->pg_command
#define strata_buffer_free strata_api->buffer_free
#define strata_session_open strata_api->session_open
#define strata_session_send strata_api->session_send
#define strata_session_status strata_api->session_status
#define strata_session_close strata_api->session_close
#define strata_write_op_snap_context strata_api->write_op_snap_context
#define strata_write_op_snap_trim strata_api->write_op_snap_trim
#define strata_write_op_snap_rollback strata_api->write_op_snap_rollback
#define strata_read_op_set_snap strata_api->read_op_set_snap
#define strata_read_op_list_snaps strata_api->read_op_list_snaps

#endif /* STRATA_FRONTEND_CLIENT_H */
