// An NBD server (the protocol: github.com/NetworkBlockDevice/nbd,
// doc/proto.md) exporting BlockDevices: fixed newstyle negotiation only,
// NBD_OPT_GO / INFO / EXPORT_NAME / LIST / ABORT / STRUCTURED_REPLY /
// LIST_META_CONTEXT / SET_META_CONTEXT ("base:allocation"), and the
// commands READ, WRITE, FLUSH, TRIM, WRITE_ZEROES, CACHE, BLOCK_STATUS,
// DISC, with FUA, NO_HOLE, DF and REQ_ONE flags; simple or structured
// replies as negotiated; NBD_FLAG_CAN_MULTI_CONN (every connection reaches
// the same device; a flush covers them all).
//
// Many requests of one connection are in flight at once (a reader thread
// parses, the device completes asynchronously, replies are written under
// a per-connection lock). Bad input — bad magic, an unknown option or
// command, an offset past the end, a length over the maximum, a client
// that disconnects mid-request — gets an error reply or a closed
// connection, never a crash and never a stall of other connections.
//
// Threading: start/stop from one controlling thread; stats() from any.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "block_device.h"

namespace strata::rbd {

struct NbdExport {
  std::string name;         // what clients ask for ("" is the default export)
  std::string description;  // NBD_INFO_DESCRIPTION
  std::shared_ptr<BlockDevice> device;
};

struct NbdServerOptions {
  // Exactly one of: a Unix socket path (made, and removed at stop) or a
  // TCP "HOST:PORT" (PORT 0: any free port, see bound_address()).
  std::string unix_path;
  std::string tcp_listen;
  bool read_only = false;             // every export read-only whatever the device says
  uint32_t max_payload = 32u << 20;   // largest READ/WRITE length accepted (NBD_INFO_BLOCK_SIZE max)
  uint32_t max_connections = 256;     // beyond: accept and close at once
  uint32_t max_inflight_per_connection = 128;  // the reader waits beyond this
  uint32_t handshake_timeout_ms = 10000;       // a client stuck negotiating is closed
  std::function<void(int level, const std::string &line)> log;  // strata_log_level; may be empty
};

struct NbdServerStats {
  uint64_t connections_total = 0, connections_open = 0;
  uint64_t requests = 0, errors = 0, protocol_errors = 0;
  uint64_t reads = 0, writes = 0, flushes = 0, trims = 0, zeroes = 0, caches = 0,
           block_status = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
};

class NbdServer {
 public:
  // Binds and starts accepting. Throws strata::sdk::Error (e.g. -EADDRINUSE
  // naming the address) when it cannot listen.
  static std::unique_ptr<NbdServer> start(std::vector<NbdExport> exports, NbdServerOptions opts);
  // A server that listens nowhere (opts.unix_path and opts.tcp_listen must
  // be empty) and serves only the sockets given to adopt(): the kernel's
  // NBD client gets one end of a socketpair this way. Throws as start().
  static std::unique_ptr<NbdServer> start_unlistening(std::vector<NbdExport> exports,
                                                      NbdServerOptions opts);
  virtual ~NbdServer() = default;  // stops if stop() was not called

  // Stops accepting, closes every connection after the requests in flight
  // completed (their replies are sent when possible), joins every thread.
  virtual void stop() = 0;
  // Serves an already connected stream socket as one more connection,
  // from the handshake on (the server speaks first). Takes ownership of
  // `fd` in every case (closed when refused). 0, or -ESHUTDOWN after
  // stop(), -EMFILE past max_connections, -EAGAIN when no thread could be
  // started.
  virtual int adopt(int fd) = 0;
  // "unix:/path" or "127.0.0.1:PORT" (the real port when 0 was asked);
  // "" for a server that listens nowhere.
  virtual std::string bound_address() const = 0;
  virtual NbdServerStats stats() const = 0;
};

}  // namespace strata::rbd
