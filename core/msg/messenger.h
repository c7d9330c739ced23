// The messenger: authenticated, framed messages over TCP (Boost.Asio).
//
// Wire: a connection starts with a mutual HMAC-SHA256 challenge-response on
// the connecting entity's secret (the secret never crosses the wire; a peer
// without the right key gets kMsgAuthError and is closed before any other
// frame is read or sent). Then frames (frame.h): header with type, lengths
// and crc32c; a Cap'n Proto payload; raw data segments.
//
// Threading: the messenger runs its own I/O thread(s). Handlers run on them
// and must not block for long (hand work to another thread). send() and
// close() are thread-safe and never block on the network.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/status.h"

namespace strata::msg {

// One message. The payload is a Cap'n Proto flat array of the root struct
// its type names; segments are raw bytes the payload refers to by index.
struct Message {
  uint16_t type = 0;
  std::string payload;
  std::vector<std::string> segments;
};

class Connection {
 public:
  virtual ~Connection() = default;
  // Queues m for sending. False when the connection is closed.
  virtual bool send(Message m) = 0;
  // The authenticated entity at the other end ("osd.2", "client.admin").
  virtual const std::string &peer_entity() const = 0;
  virtual std::string peer_address() const = 0;
  // Closes after logging `reason`; on_close runs once.
  virtual void close(const std::string &reason) = 0;
  virtual bool is_open() const = 0;
};
using ConnectionRef = std::shared_ptr<Connection>;

struct MessengerOptions {
  std::size_t max_payload = 4u << 20;   // Cap'n Proto payload bytes
  std::size_t max_data = 256u << 20;    // all data segments of one frame
  std::size_t max_segments = 1024;
  int io_threads = 1;
  std::chrono::milliseconds handshake_timeout{5000};
  // Connections that fail before authenticating (junk, scanners, wrong
  // keys) log at most one WARN line per peer address per interval, with
  // the count of those suppressed (peer_log_limiter.h).
  std::chrono::milliseconds unauthenticated_log_interval{10000};
};

// Secrets the accepting side uses to check who connects: returns the
// secret of `entity`, or nothing for an unknown entity (refused).
using SecretLookup = std::function<std::optional<std::string>(const std::string &entity)>;

struct Handlers {
  // A whole, checked message from an authenticated peer.
  std::function<void(const ConnectionRef &, Message &&)> on_message;
  // The connection ended (peer closed, error, close()); `reason` says why.
  std::function<void(const ConnectionRef &, const std::string &reason)> on_close;
  // An incoming connection finished authenticating.
  std::function<void(const ConnectionRef &)> on_accept;
};

// While a SendBatch lives on a thread, what that thread sends is held and
// goes out when the last one ends: each connection's messages in one gather
// write. A thread answering many requests at once (the MDS as a journal
// write commits, an OSD as a group commit completes) then makes one
// syscall per peer, not one per message. Nests; the I/O threads' own sends
// are never held (they already go out together).
class SendBatch {
 public:
  SendBatch();
  ~SendBatch();
  SendBatch(const SendBatch &) = delete;
  SendBatch &operator=(const SendBatch &) = delete;

 private:
  friend class BatchAccess;
  SendBatch *outer_ = nullptr;       // the thread's batch before this one
  std::vector<ConnectionRef> held_;  // in the outermost batch only
};

class Messenger {
 public:
  // `self` is this process's entity; `self_secret` its key, used when it
  // connects out. `lookup` verifies incoming peers (may be empty for a
  // process that never listens).
  Messenger(std::string self, std::string self_secret, SecretLookup lookup, Logger &log,
            MessengerOptions opts = {});
  ~Messenger();  // stops
  Messenger(const Messenger &) = delete;
  Messenger &operator=(const Messenger &) = delete;

  void set_handlers(Handlers h);  // before start()
  // Binds and listens; port 0 picks one. Returns "host:port" as bound.
  Result<std::string> listen(const std::string &host, uint16_t port);
  void start();
  // Closes every connection (on_close runs for each) and joins the threads.
  void stop();

  // Connects to "host:port" and authenticates as `self`; blocks up to
  // `timeout`. The peer must prove it knows our secret too.
  Result<ConnectionRef> connect(const std::string &address,
                                std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

  const std::string &self() const;

  // Closes every open connection whose authenticated peer is `entity` (its
  // key was removed or changed) and returns how many. Call it after the
  // secret lookup stops returning the old key: once this returns, no
  // message of those connections is delivered any more, and a connection
  // whose handshake overlapped the call is closed as it opens (the peer
  // must authenticate again, against the new keys).
  std::size_t close_entity(const std::string &entity, const std::string &reason);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::msg
