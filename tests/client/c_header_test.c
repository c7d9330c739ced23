/* strata/client.h is plain C: this file is compiled as C99 with -pedantic
 * and linked against libstrata_client.so, the form third parties use, so
 * that the header and the exported symbols are checked together. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "strata/client.h"
#include "strata/objectstore.h" /* both SDK headers in one file must not clash */

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

int main(void) {
  int major = 0, minor = -1;
  const char *overrides[] = {"mon_addr=127.0.0.1:1", "client_op_timeout_ms=100"};
  strata_cluster_args args;
  strata_cluster_t cluster = NULL;
  strata_ioctx_t io = NULL;
  strata_write_op_t op;
  strata_completion_t comp = NULL;
  char buf[64];

  strata_client_version(&major, &minor);
  EXPECT(major == STRATA_CLIENT_VERSION_MAJOR && minor == STRATA_CLIENT_VERSION_MINOR);

  memset(&args, 0, sizeof args);
  args.struct_size = sizeof args;
  args.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
  args.entity = "client.ctest";
  args.overrides = overrides;
  args.n_overrides = 2;
  EXPECT(strata_cluster_create(&args, &cluster) == 0);
  EXPECT(strata_cluster_conf_get(cluster, "client_op_timeout_ms", buf, sizeof buf) == 3);
  EXPECT(strcmp(buf, "100") == 0);
  EXPECT(strata_ioctx_create(cluster, "data", &io) == -ENOTCONN);
  EXPECT(strlen(strata_last_error()) > 0);

  op = strata_write_op_new();
  EXPECT(op != NULL);
  strata_write_op_write_full(op, "x", 1);
  EXPECT(strata_write_op_size(op) == 1);
  strata_write_op_release(op);

  EXPECT(strata_completion_create(NULL, NULL, &comp) == 0);
  EXPECT(strata_completion_is_complete(comp) == 0);
  strata_completion_release(comp);

  strata_cluster_shutdown(cluster);
  puts("c header test: ok");
  return 0;
}
