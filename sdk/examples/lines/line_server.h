// The `lines` frontend: serves the line protocol (protocol.h) on one TCP
// address, storing each value as the data of an object in one pool.
//
// One serve thread runs a poll() loop over the listening socket, the
// connected clients and a wake-up eventfd; a request's cluster call runs on
// that thread (an example keeps it simple: a slow OSD delays every client).
// The cluster is reached through the host's client routine table only.
//
// Threading: the constructor and stop() on the host's controlling thread;
// status_*() and metrics() from any host thread while serving (they read
// atomic counters and immutable fields only).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <unordered_map>

#include "strata/frontend.h"

namespace lines {

struct Settings {
  std::string pool;
  std::string listen;     // "HOST:PORT", an IPv4 address; port 0 picks one
  std::string port_file;  // "" or where to write the port once listening
  size_t max_line = 0;    // longest request line accepted
};

class LineServer {
 public:
  // Opens the pool, binds, listens and starts the serve thread; throws
  // strata::sdk::Error naming what failed (the pool, the address).
  LineServer(const strata_frontend_host *host, strata_cluster_t cluster, Settings settings);
  ~LineServer();
  LineServer(const LineServer &) = delete;
  LineServer &operator=(const LineServer &) = delete;

  // Wakes and joins the serve thread, closes every socket, releases the
  // pool's ioctx. Idempotent.
  void stop();

  std::string status_line() const;
  std::string status_json() const;
  std::string metrics() const;

 private:
  struct Client {
    std::string in;  // bytes received, not yet a whole line
  };

  void serve();
  void accept_clients();
  // False when the connection must be closed.
  bool read_from(int fd, Client &c);
  std::string handle(const std::string &line, bool *close);
  void log(int level, const std::string &msg) const;

  // The client routines, under the name strata/frontend_client.h expects.
  const strata_client_api *strata_api;
  const strata_frontend_host *host_;
  Settings settings_;
  strata_ioctx_t io_ = nullptr;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::string address_;                      // as bound, "127.0.0.1:40123"
  std::unordered_map<int, Client> clients_;  // serve thread only
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  std::atomic<uint64_t> connections_total_{0}, connections_open_{0};
  std::atomic<uint64_t> puts_{0}, gets_{0}, dels_{0}, errors_{0};
  std::atomic<uint64_t> bytes_stored_{0}, bytes_served_{0};
};

}  // namespace lines
