// The handshake phase of one NBD connection (fixed newstyle only): greets
// the client, answers its options, and either hands the connection to the
// transmission phase with what was agreed or says to close it.
#pragma once

#include <cstdint>

#include "nbd_context.h"
#include "nbd_socket.h"

namespace strata::rbd::nbd {

struct Negotiated {
  const NbdExport *exp = nullptr;
  bool structured = false;       // NBD_OPT_STRUCTURED_REPLY was acknowledged
  bool base_allocation = false;  // "base:allocation" was selected for this export
  bool read_only = false;
  uint16_t transmission_flags = 0;
};

// Runs the handshake on `fd` until NBD_OPT_GO / NBD_OPT_EXPORT_NAME
// succeeds (returns true and fills *out) or the connection must close
// (returns false: abort, bad magic or flags, unknown export on
// EXPORT_NAME, disconnect, `deadline` passed, server stopping).
bool negotiate(int fd, ServerContext &ctx, Clock::time_point deadline, Negotiated *out);

// The transmission flags an export is served with.
uint16_t transmission_flags(const ServerContext &ctx, const NbdExport &exp, bool structured);

}  // namespace strata::rbd::nbd
