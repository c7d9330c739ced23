// Service sessions (strata_session_* of strata/client.h).
// PLACEHOLDER on main while the session branch is in flight: every call
// answers -ENOSYS. The session branch replaces this file.
#include <cerrno>

#include "client/c_api_internal.h"

extern "C" {

int strata_session_open(strata_cluster_t, const char *, const char *, strata_session_cb, void *,
                        strata_session_t *out) {
  if (out) *out = nullptr;
  return -ENOSYS;
}

int strata_session_send(strata_session_t, uint32_t, const void *, size_t) { return -ENOSYS; }

int64_t strata_session_status(strata_session_t, char *, size_t) { return -ENOSYS; }

void strata_session_close(strata_session_t) {}

}  // extern "C"
