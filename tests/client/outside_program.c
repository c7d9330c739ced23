/* A third-party program linked against libstrata_client.so, built outside
 * the build's bin directory (so nothing relative to the program finds the
 * plugins):
 *   outside_program MON_ADDR KEYRING TIMEOUT_MS
 * connects as client.admin and prints "rc N MESSAGE". */
#include <stdio.h>
#include <stdlib.h>

#include "strata/client.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: outside_program MON_ADDR KEYRING TIMEOUT_MS\n");
    return 2;
  }
  char mon[512], keyring[1024];
  snprintf(mon, sizeof mon, "mon_addr=%s", argv[1]);
  snprintf(keyring, sizeof keyring, "keyring=%s", argv[2]);
  const char *overrides[] = {mon, keyring, "log_level=error"};
  strata_cluster_args a = {0};
  a.struct_size = sizeof a;
  a.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
  a.overrides = overrides;
  a.n_overrides = 3;
  strata_cluster_t c = NULL;
  int rc = strata_cluster_create(&a, &c);
  if (rc == 0) rc = strata_cluster_connect(c, (uint32_t)atoi(argv[3]));
  printf("rc %d %s\n", rc, rc < 0 ? strata_last_error() : "connected");
  strata_cluster_shutdown(c);
  return 0;
}
