// A connection to the monitor for clients, daemons and tools: keeps the
// latest cluster map (subscribed; incrementals applied as they arrive),
// runs administrative commands, receives the auth keys (daemons), and
// carries daemon messages (OsdBoot, OsdStats, OsdFailure) to the monitor.
//
// It owns its Messenger (one I/O thread) and reconnects on its own when the
// connection drops, or goes silent past the keepalive timeout
// (msg/keepalive.h): it resubscribes from the epoch it has and runs the
// on_connect callback again (an OSD sends OsdBoot there).
//
// Threading: every method is thread-safe. Callbacks run on the messenger's
// I/O thread (on_connect on the reconnect thread), one at a time, and must
// not block for long nor call command()/wait_for_map() (that would wait on
// the thread that delivers the answer).
//
//   MonClient mc({.mon_addr = "127.0.0.1:6789", .entity = "client.admin", .secret = key}, log);
//   if (Status s = mc.start(); !s.ok()) ...
//   auto r = mc.command("pool create", {{"name", "data"}, {"size", "3"}});
//   if (r.ok() && r->rc == 0) std::puts(r->message.c_str());
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_map.h"
#include "common/log.h"
#include "common/status.h"
#include "msg/messenger.h"

namespace strata::mon {

struct MonClientOptions {
  std::string mon_addr = "127.0.0.1:6789";
  std::string entity = "client.admin";
  std::string secret;      // raw bytes (Keyring::secret(entity))
  bool want_auth = false;  // daemons: receive every key (AuthUpdate)
  bool subscribe = true;   // false: commands only, no map
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds reconnect_interval{300};
  // A ping every keepalive_interval (0: none); a connection the monitor has
  // not answered on for keepalive_timeout is closed and made again.
  std::chrono::milliseconds keepalive_interval{1000};
  std::chrono::milliseconds keepalive_timeout{5000};
  msg::MessengerOptions messenger;
};

struct MonCommandResult {
  int rc = 0;           // 0 or negative errno (from the monitor)
  std::string message;  // human text; the error text when rc < 0
  std::string json;     // machine form (see mon_commands.h)
  uint64_t epoch = 0;   // map epoch after the command
};

using MonCommandArgs = std::vector<std::pair<std::string, std::string>>;

class MonClient {
 public:
  using MapCallback = std::function<void(std::shared_ptr<const cluster::ClusterMap>)>;
  using AuthCallback =
      std::function<void(uint64_t version, const std::map<std::string, std::string> &keys)>;
  using ConnectCallback = std::function<void()>;

  MonClient(MonClientOptions opts, Logger &log);
  ~MonClient();  // stops
  MonClient(const MonClient &) = delete;
  MonClient &operator=(const MonClient &) = delete;

  // Set before start().
  void on_map(MapCallback cb);          // every new map, in epoch order
  void on_auth(AuthCallback cb);        // every AuthUpdate (want_auth only)
  void on_connect(ConnectCallback cb);  // after each (re)connection and subscribe

  // Connects (waits up to connect_timeout) and subscribes. Fails when the
  // monitor cannot be reached or refuses our key; then the client is not
  // started. After success it keeps reconnecting until stop().
  Status start();
  void stop();  // idempotent

  bool connected() const;
  // The latest map; null before the first one arrives.
  std::shared_ptr<const cluster::ClusterMap> map() const;
  uint64_t epoch() const;
  // Waits until the map is at least `min_epoch` (1: any map).
  Result<std::shared_ptr<const cluster::ClusterMap>> wait_for_map(
      uint64_t min_epoch, std::chrono::milliseconds timeout);

  // Runs a monitor command and waits for its reply. Transport failures
  // (no connection within the timeout, connection lost before the reply)
  // are errors; the command's own failure is the result's rc.
  Result<MonCommandResult> command(const std::string &prefix, const MonCommandArgs &args = {},
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Sends a message to the monitor on the current connection; false when
  // there is none (it is not queued for a later one).
  bool send(msg::Message m);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace strata::mon
