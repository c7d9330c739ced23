// How the MDS client reaches the MDS: one ordered message channel. The
// plugin's implementation is a strata_session (session_transport.h); tests
// drive the MDS client through a fake.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::fuse {

class MdsTransport {
 public:
  virtual ~MdsTransport() = default;
  // Queues one message (a fs.capnp msg* type and its flat-array payload).
  // 0, -ENOTCONN while disconnected (the client resends after the next
  // connect), or another -errno.
  virtual int send(uint16_t type, const void *payload, size_t len) = 0;
};

}  // namespace strata::fuse
