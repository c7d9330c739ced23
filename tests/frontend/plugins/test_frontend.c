/*
 * A frontend plugin for the host's tests, in C99 (so frontend.h and
 * client_api.h are proven to compile as C). It touches no cluster; what it
 * does is chosen by its options:
 *   fail_start     true: start fails with -EADDRINUSE and a message
 *   request_stop   none | ok | fail: a thread of the plugin asks the host
 *                  to stop (result 0, or -EPIPE with a reason)
 *   metrics_bytes  the size of the metrics text (to make the host grow its
 *                  buffer)
 *   stop_fails     true: stop reports -EIO (and still frees the instance)
 *   checks_client  true: start fails unless every routine of the client
 *                  table is set and strata_client_version answers through it
 * Compiled with PLUGIN_NULL_STOP (vtable without stop) and PLUGIN_MINOR
 * (the ABI minor it claims) to make files the host must refuse.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/frontend.h"
#include "strata/frontend_client.h"

#ifndef PLUGIN_MINOR
#define PLUGIN_MINOR STRATA_ABI_MINOR
#endif
#ifndef PLUGIN_NAME
#define PLUGIN_NAME "test"
#endif

struct strata_frontend {
  const strata_frontend_host *host;
  pthread_t thread;
  int has_thread;
  int request; /* 0 none, 1 ok, 2 fail */
  long metrics_bytes;
  int stop_fails;
};

static const strata_option_spec kOptions[] = {
    {"fail_start", STRATA_OPT_BOOL, "false", NULL, "start fails"},
    {"request_stop", STRATA_OPT_ENUM, "none", "none|ok|fail", "ask the host to stop"},
    {"metrics_bytes", STRATA_OPT_INT, "10", NULL, "size of the metrics text"},
    {"stop_fails", STRATA_OPT_BOOL, "false", NULL, "stop reports an error"},
    {"checks_client", STRATA_OPT_BOOL, "false", NULL, "check the client routine table"},
};

static const char *option(const strata_frontend_args *a, const char *name) {
  size_t i;
  for (i = 0; i < a->n_options; ++i)
    if (strcmp(a->options[i].key, name) == 0) return a->options[i].value;
  return "";
}

static void *asker(void *arg) {
  struct strata_frontend *fe = (struct strata_frontend *)arg;
  if (fe->request == 1)
    fe->host->request_stop(fe->host->ctx, 0, "the test plugin is done");
  else
    fe->host->request_stop(fe->host->ctx, -EPIPE, "the test plugin lost its pipe");
  return NULL;
}

static int check_client(const strata_client_api *strata_api, strata_err *err) {
  const char *p = (const char *)strata_api;
  size_t off;
  int major = -1, minor = -1;
  if (strata_api->struct_size < sizeof(strata_client_api)) {
    snprintf(err->msg, sizeof err->msg, "client table of %u bytes, expected %u",
             (unsigned)strata_api->struct_size, (unsigned)sizeof(strata_client_api));
    return -EINVAL;
  }
  for (off = offsetof(strata_client_api, client_version); off < sizeof(strata_client_api);
       off += sizeof(void (*)(void))) {
    void (*fn)(void);
    memcpy(&fn, p + off, sizeof fn);
    if (!fn) {
      snprintf(err->msg, sizeof err->msg, "client table slot at offset %u is NULL", (unsigned)off);
      return -EINVAL;
    }
  }
  if (!STRATA_CLIENT_API_HAS(strata_api, write_op_set_request_id)) return -EINVAL;
  strata_client_version(&major, &minor);
  if (major != STRATA_CLIENT_VERSION_MAJOR || minor < 1) {
    snprintf(err->msg, sizeof err->msg, "client version %d.%d through the table", major, minor);
    return -EINVAL;
  }
  return 0;
}

static int start(const strata_frontend_host *host, strata_cluster_t cluster,
                 const strata_frontend_args *args, strata_frontend **out, strata_err *err) {
  struct strata_frontend *fe;
  const char *req = option(args, "request_stop");
  (void)cluster;
  *out = NULL;
  if (strcmp(option(args, "fail_start"), "true") == 0) {
    snprintf(err->msg, sizeof err->msg, "cannot listen on 127.0.0.1:1: address in use");
    return -EADDRINUSE;
  }
  if (strcmp(option(args, "checks_client"), "true") == 0) {
    int rc = check_client(host->client, err);
    if (rc < 0) return rc;
  }
  fe = (struct strata_frontend *)calloc(1, sizeof *fe);
  if (!fe) return -ENOMEM;
  fe->host = host;
  fe->request = strcmp(req, "ok") == 0 ? 1 : strcmp(req, "fail") == 0 ? 2 : 0;
  fe->metrics_bytes = atol(option(args, "metrics_bytes"));
  fe->stop_fails = strcmp(option(args, "stop_fails"), "true") == 0;
  host->log(host->ctx, STRATA_LOG_INFO, "test frontend started");
  if (fe->request && pthread_create(&fe->thread, NULL, asker, fe) == 0) fe->has_thread = 1;
  *out = fe;
  return 0;
}

__attribute__((unused)) static int stop(strata_frontend *fe, strata_err *err) {
  int fails = fe->stop_fails;
  if (fe->has_thread) pthread_join(fe->thread, NULL);
  free(fe);
  if (fails) {
    snprintf(err->msg, sizeof err->msg, "could not flush 3 buffered writes");
    return -EIO;
  }
  return 0;
}

static int64_t copy_out(const char *text, size_t n, char *buf, size_t len) {
  if (len > 0) {
    size_t k = n < len - 1 ? n : len - 1;
    memcpy(buf, text, k);
    buf[k] = '\0';
  }
  return (int64_t)n;
}

static int64_t status(strata_frontend *fe, uint32_t format, char *buf, size_t len) {
  (void)fe;
  if (format == STRATA_FRONTEND_STATUS_LINE) return copy_out("idle", 4, buf, len);
  if (format == STRATA_FRONTEND_STATUS_JSON) return copy_out("{\"idle\":true}", 13, buf, len);
  return -EOPNOTSUPP;
}

static int64_t metrics(strata_frontend *fe, char *buf, size_t len) {
  size_t n = (size_t)fe->metrics_bytes, i;
  if (len > 0) {
    for (i = 0; i < n && i + 1 < len; ++i) buf[i] = (i % 64 == 63) ? '\n' : 'm';
    buf[i] = '\0';
  }
  return (int64_t)n;
}

#ifdef PLUGIN_NULL_STOP
static const strata_frontend_ops kOps = {
    sizeof(strata_frontend_ops), 0, start, NULL, status, metrics};
#else
static const strata_frontend_ops kOps = {
    sizeof(strata_frontend_ops), 0, start, stop, status, metrics};
#endif

static const strata_plugin_descriptor kDescriptor = {sizeof(strata_plugin_descriptor),
                                                     STRATA_ABI_MAJOR,
                                                     PLUGIN_MINOR,
                                                     STRATA_KIND_FRONTEND,
                                                     0,
                                                     PLUGIN_NAME,
                                                     "0.0.1",
                                                     "a frontend for the host's tests",
                                                     &kOps,
                                                     kOptions,
                                                     sizeof kOptions / sizeof kOptions[0],
                                                     {0}};

STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *strata_plugin_entry_v1(void) {
  return &kDescriptor;
}
