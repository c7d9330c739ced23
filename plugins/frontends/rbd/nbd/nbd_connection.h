// One NBD client connection: its reader thread negotiates, then parses
// requests and submits them to the device; the device's completions write
// the replies under the connection's write lock, from whatever thread
// they run on. Completions hold a shared_ptr to the connection, and the
// reader closes the socket only once none is left in flight, so a
// completion never touches a freed connection or a reused fd.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "nbd_context.h"
#include "nbd_negotiation.h"

namespace strata::rbd::nbd {

class Reply;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Takes ownership of `fd`, counted open in ctx.stats (run() uncounts
  // it). `ctx` must outlive run().
  Connection(int fd, ServerContext &ctx);
  ~Connection();
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;

  // The reader thread's body: returns once the client left (or broke the
  // protocol, or the server stops) and every request it submitted has
  // completed and been answered; the socket is closed by then.
  void run();
  // True once run() returned.
  bool finished() const { return finished_; }

 private:
  struct Request;

  void serve();
  // Reads and handles one request; false when the connection must end.
  bool next_request();
  uint32_t check(const Request &req) const;
  void submit(std::shared_ptr<Request> req);
  void block_status(const Request &req);
  void complete(const std::shared_ptr<Request> &req, int result);
  bool drain_payload(uint32_t len);

  void send_error(const Request &req, uint32_t error);
  void send(const Reply &reply);
  // Takes a slot for a request with `bytes` of buffer once the in-flight
  // limits allow (always when nothing is in flight); release() gives it back.
  void wait_for_room(uint64_t bytes);
  void release(uint64_t bytes);
  void wait_idle();

  const int fd_;
  ServerContext &ctx_;
  Negotiated neg_;

  std::mutex write_mu_;             // one reply on the wire at a time
  std::atomic<bool> broken_{false};  // a write failed: the client is gone

  std::mutex mu_;
  std::condition_variable cv_;
  uint32_t inflight_ = 0;        // GUARDED_BY(mu_): submitted, not yet answered
  uint64_t inflight_bytes_ = 0;  // GUARDED_BY(mu_): their read / write buffers

  // Buffers in flight per connection stay under this (or one max_payload).
  static constexpr uint64_t kInflightBytes = 64u << 20;

  std::atomic<bool> finished_{false};
};

}  // namespace strata::rbd::nbd
