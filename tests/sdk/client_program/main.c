/* Prints the client library's version: proof that the program linked
 * against StrataSDK::client finds libstrata_client.so at run time. */
#include <stdio.h>

#include "strata/client.h"
#include "strata/plugin.h"

#if PACKAGE_MAJOR != STRATA_ABI_MAJOR || PACKAGE_MINOR != STRATA_ABI_MINOR
#error "the StrataSDK package version is not the ABI version of its headers"
#endif

int main(void) {
  int major = -1, minor = -1;
  strata_client_version(&major, &minor);
  printf("client %d.%d, SDK %d.%d\n", major, minor, PACKAGE_MAJOR, PACKAGE_MINOR);
  return major == STRATA_CLIENT_VERSION_MAJOR ? 0 : 1;
}
