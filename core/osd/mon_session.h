// The OSD's session with the monitor: keeps one connection open (reconnects
// after a pause when it drops, or when the monitor has not answered the
// keepalive pings for the keepalive timeout: msg/keepalive.h), and on every
// new connection sends the messages `on_connect` builds (subscribe to maps
// with keys, boot).
//
// Not a mon::MonClient: that one owns a messenger and keeps the map and
// commands itself. This session rides on the OSD's own messenger (one
// identity, one listening address), and what the monitor sends arrives
// through the OSD's common message handler, which applies maps in its own
// order (osd_maps.cpp).
//
// Threading: send() and on_close() are thread-safe; callbacks run on the
// session thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "msg/keepalive.h"
#include "msg/messenger.h"

namespace strata::osd {

class MonSession {
 public:
  MonSession(msg::Messenger &messenger, Logger &log, std::string mon_addr,
            std::function<std::vector<msg::Message>()> on_connect,
            msg::SessionKeepalive keepalive = {std::chrono::milliseconds(1000),
                                               std::chrono::milliseconds(5000)});
  ~MonSession();
  void start();
  void stop();

  // False when not connected (the message is dropped: everything the OSD
  // sends the monitor is periodic or re-sent on reconnect).
  bool send(msg::Message m);
  bool connected();
  bool on_close(const msg::ConnectionRef &conn);
  bool is_mon(const msg::ConnectionRef &conn);
  // A message arrived on `conn`: if it is the monitor session, it is alive.
  void on_rx(const msg::ConnectionRef &conn);

 private:
  void loop();

  msg::Messenger &messenger_;
  Logger &log_;
  std::string mon_addr_;
  std::function<std::vector<msg::Message>()> on_connect_;
  std::mutex mu_;
  std::condition_variable cv_;
  msg::ConnectionRef conn_;  // GUARDED_BY(mu_)
  msg::SessionKeepalive keepalive_;  // GUARDED_BY(mu_)
  uint64_t next_ping_tid_ = 1;       // GUARDED_BY(mu_)
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::osd
