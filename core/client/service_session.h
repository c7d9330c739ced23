// Service sessions (strata_session_* of strata/client.h): a client's
// connection to a cluster daemon that is neither the monitor nor an OSD --
// today the active MDS of a filesystem -- that follows the cluster map.
//
// A ServiceSession looks up its target's active instance in every map the
// client receives, connects to it with the client's messenger (as the
// client's entity), and reconnects (with back-off) when the connection
// breaks or the map names another instance (name, incarnation or address).
// Its callback sees CONNECTED, MESSAGE (frames of types 1024..2047) and
// DISCONNECTED, one at a time, in order, on the session's own thread.
//
// ServiceSessions is the ClusterClient's registry: the messenger's handlers
// route service-range frames and connection ends to the session that owns
// the connection, and every new map goes to every session.
//
// Threading: every public method is thread-safe. close() joins the
// session's thread, so no callback runs once it returns; called from the
// session's own callback it returns at once and no further callback runs
// (the thread finishes the current one and exits).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "cluster/cluster_map.h"
#include "common/log.h"
#include "msg/messenger.h"

namespace strata::client {

class ServiceSessions;

// What a session's owner hears: event (STRATA_SESSION_*), frame type,
// payload (valid during the call only).
using SessionCallback = std::function<void(int event, uint32_t type, std::string_view payload)>;

class ServiceSession : public std::enable_shared_from_this<ServiceSession> {
 public:
  struct Options {
    std::string service;  // "mds"
    std::string target;   // the filesystem's name
    std::chrono::milliseconds connect_timeout{3000};
    std::chrono::milliseconds min_backoff{50};
    std::chrono::milliseconds max_backoff{1000};
    std::size_t max_payload = 0;  // the messenger's limit
  };

  // `owner` (the ClusterClient) is kept alive as long as the session's
  // thread runs: it owns the messenger, the registry and the log.
  ServiceSession(Options opts, std::shared_ptr<void> owner, msg::Messenger &messenger,
                 ServiceSessions &registry, Logger &log, SessionCallback cb);
  ~ServiceSession();
  ServiceSession(const ServiceSession &) = delete;
  ServiceSession &operator=(const ServiceSession &) = delete;

  // Starts the session's thread and follows `map`. It connects at once,
  // but its events wait for deliver_events(): the owner must be able to
  // send from the first callback (strata_session_open hands out the handle
  // only when it returns, and a CONNECTED before that lost the MDS Hello).
  void start(const cluster::ClusterMap &map);
  // From now on events reach the callback (queued ones first, in order).
  void deliver_events();
  // A new map (any thread; older epochs than the last seen are ignored).
  void on_map(const cluster::ClusterMap &map);
  // A frame of the service range / the end of a connection this session
  // may own (messenger threads).
  void on_frame(const msg::ConnectionRef &c, msg::Message &&m);
  void on_close(const msg::ConnectionRef &c, const std::string &reason);

  // strata_session_send: -ENOTCONN, -EINVAL, -EMSGSIZE or 0.
  int send(uint32_t type, std::string_view payload);
  // strata_session_status's JSON.
  std::string status_json() const;
  // No callback runs once this returns (see the header comment for calls
  // from the callback itself). Idempotent.
  void close();

 private:
  // The instance the map names as active for the target.
  struct Instance {
    std::string name;  // "a"
    std::string addr;
    uint64_t incarnation = 0;
    bool operator==(const Instance &) const = default;
  };
  struct Event {
    int event;
    uint32_t type;
    std::string payload;
  };

  std::optional<Instance> wanted_from(const cluster::ClusterMap &map) const;
  // Drops the current connection (REQUIRES mu_): DISCONNECTED(reason) is
  // queued and nothing more of that connection is delivered.
  void drop_locked(const std::string &reason);
  void run();
  void try_connect(std::unique_lock<std::mutex> &lk);

  const Options opts_;
  std::shared_ptr<void> owner_;
  msg::Messenger &messenger_;
  ServiceSessions &registry_;
  Logger &log_;
  SessionCallback cb_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool delivering_ = false;  // deliver_events() was called
  uint64_t map_epoch_ = 0;
  std::optional<Instance> wanted_;  // from the newest map
  msg::ConnectionRef conn_;         // the connected instance's, or null
  Instance connected_;              // valid while conn_ is set
  bool ever_connected_ = false;
  uint64_t reconnects_ = 0;
  std::chrono::milliseconds backoff_{0};
  std::chrono::steady_clock::time_point next_attempt_{};
  std::deque<Event> events_;
  std::thread thread_;
  std::thread::id thread_id_;
};

class ServiceSessions {
 public:
  explicit ServiceSessions(Logger &log) : log_(log) {}

  void add(const std::shared_ptr<ServiceSession> &s);
  void remove(const ServiceSession *s);
  // Which session a connection belongs to (set once it is connected).
  void bind(const msg::Connection *c, const std::shared_ptr<ServiceSession> &s);
  void unbind(const msg::Connection *c);

  // From the messenger: true when the frame was a service frame (handled
  // or dropped here).
  bool handle_message(const msg::ConnectionRef &c, msg::Message &m);
  void handle_close(const msg::ConnectionRef &c, const std::string &reason);
  void handle_new_map(const cluster::ClusterMap &map);

 private:
  Logger &log_;
  std::mutex mu_;
  std::map<const ServiceSession *, std::weak_ptr<ServiceSession>> sessions_;
  std::map<const msg::Connection *, std::weak_ptr<ServiceSession>> by_conn_;
};

}  // namespace strata::client
