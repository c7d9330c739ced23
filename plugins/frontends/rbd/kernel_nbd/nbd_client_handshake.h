// The client side of the NBD handshake (doc/proto.md of
// github.com/NetworkBlockDevice/nbd): fixed newstyle, then NBD_OPT_GO for
// one export name, over an already connected stream socket. The kernel's
// NBD driver speaks only the transmission phase, so whoever hands it a
// socket must have negotiated first; this is that negotiation, and what it
// learns (size, transmission flags, block sizes) is what the kernel is
// told through its ioctls.
#pragma once

#include <cstdint>
#include <string>

namespace strata::rbd {

struct NbdClientExport {
  uint64_t size = 0;
  uint16_t transmission_flags = 0;  // NBD_FLAG_* as the server sent them
  // NBD_INFO_BLOCK_SIZE; the protocol's defaults when the server sent none.
  uint32_t min_block = 1;
  uint32_t preferred_block = 4096;
  uint32_t max_block = 32u << 20;
  bool block_sizes_sent = false;
};

// Negotiates export `export_name` on `fd` (blocking socket; not closed,
// not made non-blocking). On success returns 0 and fills *out: the socket
// is then in the transmission phase, ready for requests (or the kernel).
// On failure returns -errno and sets *why (naming the export and what the
// server did): -ENOENT the server has no such export, -EACCES it refuses
// (policy, or TLS required), -EOPNOTSUPP it does not offer fixed newstyle
// or NBD_OPT_GO, -ESHUTDOWN it is shutting down, -EPROTO a reply the
// protocol does not allow (bad magic, wrong option, malformed info),
// -ECONNRESET it closed the connection, -ETIMEDOUT nothing complete within
// timeout_ms. The socket is unusable after a failure (close it).
int nbd_client_go(int fd, const std::string &export_name, uint32_t timeout_ms,
                  NbdClientExport *out, std::string *why);

}  // namespace strata::rbd
