/*
 * Strata frontend plugin ABI (kind STRATA_KIND_FRONTEND), added in ABI 1.3.
 *
 * A frontend serves the cluster's objects to the outside world: a POSIX
 * filesystem over FUSE (`strata mount`), block images over NBD (`strata nbd
 * serve`), an S3 gateway (`strata gateway`), or any third-party protocol
 * (`strata frontend run --plugin NAME`). The host owns the process: it reads
 * the config, validates the plugin's options (its strata_option_spec list),
 * connects to the cluster, handles SIGINT/SIGTERM, logs, and reports status
 * and metrics. The plugin owns its protocol: listening sockets, a FUSE
 * session, its serve threads.
 *
 * The cluster is reached through the client routine table the host hands
 * in (strata/client_api.h, strata/frontend_client.h): a frontend links no
 * client library and opens no connection of its own.
 *
 * Life of an instance:
 *
 *   host:    load, validate options, connect, start(...)
 *   plugin:  its threads serve; any of them may call host->request_stop
 *   host:    (status, metrics at any time)
 *   host:    on SIGINT/SIGTERM or request_stop: stop(...), disconnect
 *
 * Threading and ownership, per call:
 *   - start: called once per instance, from a host thread. It sets up what
 *     serving needs (sockets bound, session mounted, threads started) and
 *     returns; it does not run the serve loop itself. On success *out is
 *     the instance. On failure it returns a negative errno, fills err, has
 *     undone everything it began (no thread left running) and *out is NULL.
 *   - The plugin may start any threads it needs. The host blocks SIGINT,
 *     SIGTERM, SIGHUP and SIGUSR1 in every thread before start, so plugin
 *     threads inherit a mask that sends those signals to the host; a plugin
 *     must not unblock them or install handlers for them, and writes to
 *     sockets with MSG_NOSIGNAL (the host also ignores SIGPIPE).
 *   - status and metrics: called from host threads at any time between
 *     start's success and stop, possibly concurrently with each other and
 *     with the plugin's own threads; never concurrently with or after stop.
 *     They answer from what the plugin already knows (counters, state) and
 *     never wait for the cluster or a client of the protocol.
 *   - stop: called exactly once, from a host thread that is not a plugin
 *     thread, after SIGINT/SIGTERM or after the plugin asked for it. It
 *     stops serving, finishes or fails what is in flight, joins every
 *     plugin thread, releases every client object it made (ioctx, ops,
 *     completions...) and frees the instance, whatever it returns. It must
 *     return in bounded time. After it returns no plugin code runs and
 *     nothing uses the host table or the cluster handle.
 *   - The host table and the cluster handle given to start stay valid until
 *     stop returns. The cluster handle is the host's: the plugin calls
 *     client routines on it and never shuts it down.
 *
 * Output conventions (status, metrics): like the client's buffer calls, the
 * plugin copies at most len bytes, NUL-terminated when len > 0, and returns
 * the full length without the NUL (like snprintf); a result >= len means
 * "call again with a bigger buffer". A negative errno reports a failure.
 */
#ifndef STRATA_FRONTEND_H
#define STRATA_FRONTEND_H

#include "strata/client_api.h"
#include "strata/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_frontend strata_frontend; /* opaque, plugin-owned instance */

/* What the host offers a running frontend. Host-allocated, valid until stop
 * returns. Every callback is safe to call from any thread (the plugin's own
 * included), never blocks for long, and never lets an exception or a
 * longjmp cross back into the plugin. Check struct_size before using a field
 * added after 1.3. */
typedef struct strata_frontend_host {
  uint32_t struct_size;
  uint32_t reserved0;
  void *ctx; /* passed back to every callback */
  /* msg is one line without a trailing newline; level a strata_log_level.
   * The host prefixes the plugin's name. */
  void (*log)(void *ctx, int level, const char *msg);
  /* Asks the host to stop this frontend, as SIGTERM would: the serve loop
   * ended on its own (the filesystem was unmounted, the listening socket
   * failed...). Returns at once; the host then calls stop from its own
   * thread. result 0 is a normal end (the host exits 0), a negative errno a
   * failure (the host exits non-zero and prints reason). reason is one line
   * with context, copied by the host; may be NULL. The first request wins;
   * later ones are ignored. Callable from start (the host stops right after
   * it returns) until stop is called; never call stop yourself. */
  void (*request_stop)(void *ctx, int result, const char *reason);
  /* The client routines (strata/frontend_client.h maps the strata_* names
   * onto them). */
  const strata_client_api *client;
  void *reserved[6];
} strata_frontend_host;

/* The arguments of start. Host-allocated; valid only during start: the
 * plugin copies what it keeps. */
typedef struct strata_frontend_args {
  uint32_t struct_size;
  uint32_t reserved0;
  /* The plugin's options, validated by the host against the descriptor's
   * strata_option_spec list, with every declared option present (defaults
   * filled in), in the descriptor's order. */
  const strata_kv *options;
  size_t n_options;
  /* The name the instance is run as, for messages and metric labels:
   * the plugin's name unless the host says otherwise. */
  const char *instance_name;
  void *reserved[4];
} strata_frontend_args;

/* Formats for status. */
#define STRATA_FRONTEND_STATUS_LINE 1 /* one line of text, no newline: "serving X, N clients" */
#define STRATA_FRONTEND_STATUS_JSON 2 /* one JSON object, for `strata status --format json` */

/* The vtable of kind STRATA_KIND_FRONTEND: descriptor.ops points to one.
 * Every slot is required (the host refuses a plugin with a NULL one). */
typedef struct strata_frontend_ops {
  uint32_t struct_size; /* sizeof(strata_frontend_ops) as the plugin knows it */
  uint32_t reserved0;

  /* Starts serving on the connected `cluster`, reached through
   * host->client. See the top of this file for the rules. */
  int (*start)(const strata_frontend_host *host, strata_cluster_t cluster,
               const strata_frontend_args *args, strata_frontend **out, strata_err *err);

  /* Stops serving and frees the instance (always, whatever the result).
   * 0, or a negative errno with err filled when something could not be
   * finished cleanly (e.g. buffered writes that could not be flushed). */
  int (*stop)(strata_frontend *fe, strata_err *err);

  /* The instance's status in `format` (STRATA_FRONTEND_STATUS_*) into buf,
   * as the output conventions above say. An unknown format answers
   * -EOPNOTSUPP. */
  int64_t (*status)(strata_frontend *fe, uint32_t format, char *buf, size_t len);

  /* The instance's metrics in the Prometheus text exposition format
   * (version 0.0.4: "# HELP", "# TYPE", "name{label=\"v\"} value" lines,
   * each ending in '\n'), into buf as the output conventions say. Names
   * start with "strata_<plugin name>_"; 0 bytes is a valid answer. */
  int64_t (*metrics)(strata_frontend *fe, char *buf, size_t len);

  /* Slots added after 1.3 go here; the host checks struct_size first. */
} strata_frontend_ops;

#ifdef __cplusplus
}
#endif

#endif /* STRATA_FRONTEND_H */
