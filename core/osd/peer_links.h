// Outgoing connections from this OSD to its peers, one per peer OSD,
// opened on demand. Sending never blocks: a message for a peer that is not
// connected yet waits in that peer's queue while a background thread
// connects (the messenger's connect() blocks). Replies to a peer's requests
// do not come through here; they go back on the connection the request
// came in on.
//
// When a link that carried messages closes, anything in flight on it may
// be lost, so the owner is told (on_reset) and re-peers the PGs that peer
// serves: peering settles what did and did not arrive.
//
// Threading: every public method is thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "common/log.h"
#include "msg/messenger.h"

namespace strata::osd {

class PeerLinks {
 public:
  // `address_of` maps an OSD id to its current "host:port" ("" = unknown or
  // down); `on_reset` runs (on a messenger or link thread) when an open link
  // to that OSD closes.
  PeerLinks(msg::Messenger &messenger, Logger &log, std::function<std::string(int32_t)> address_of,
            std::function<void(int32_t)> on_reset);
  ~PeerLinks();
  void stop();

  // Queues m for `osd`, connecting if needed. `droppable` messages
  // (heartbeats) are not queued while the link is down, only trigger a
  // connection attempt.
  void send(int32_t osd, msg::Message m, bool droppable = false);
  // Forgets queued messages and the link of an OSD that went down or
  // changed address.
  void reset(int32_t osd);
  // Tries again to connect the links that have messages waiting (called
  // periodically).
  void retry();
  // From the messenger's on_close: true if `conn` was one of our links.
  bool on_close(const msg::ConnectionRef &conn);

 private:
  struct Link {
    msg::ConnectionRef conn;
    std::string addr;      // what conn is connected to
    std::deque<msg::Message> queue;
    bool connecting = false;
    uint64_t generation = 0;  // bumped by reset(): a late connect is discarded
  };
  void connector_loop();

  msg::Messenger &messenger_;
  Logger &log_;
  std::function<std::string(int32_t)> address_of_;
  std::function<void(int32_t)> on_reset_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int32_t, Link> links_;   // GUARDED_BY(mu_)
  std::deque<int32_t> to_connect_;  // GUARDED_BY(mu_)
  bool stopping_ = false;
  std::thread connector_;
};

}  // namespace strata::osd
