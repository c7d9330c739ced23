// The MDS transport of the plugin: a service session of the client table
// (strata_session_* in strata/client.h) to the active MDS of one
// filesystem, forwarding its events to a sink (the MdsClient).
#pragma once

#include <string>

#include "mds_client.h"
#include "strata/client_api.h"

namespace strata::fuse {

class SessionTransport : public MdsTransport {
 public:
  SessionTransport(const strata_client_api *api, strata_cluster_t cluster)
      : strata_api(api), cluster_(cluster) {}
  ~SessionTransport() override { close(); }

  // Opens the session to the MDS of `fs_name`; events go to `sink` until
  // close() returns. 0 or -errno (-ENOENT: no such filesystem).
  int open(const std::string &fs_name, MdsClient *sink);
  // No event arrives once this returns.
  void close();

  int send(uint16_t type, const void *payload, size_t len) override;
  // The session's status JSON ("" when not open).
  std::string status() const;

 private:
  static void on_event(void *arg, int event, uint32_t type, const void *payload, size_t len);

  const strata_client_api *strata_api;  // the name strata/frontend_client.h expects
  strata_cluster_t cluster_;
  strata_session_t session_ = nullptr;
  MdsClient *sink_ = nullptr;
};

}  // namespace strata::fuse
