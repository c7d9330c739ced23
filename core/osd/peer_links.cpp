#include "osd/peer_links.h"
#include "common/thread_name.h"

namespace strata::osd {

namespace {
// Messages kept for a peer that cannot be reached; beyond this the oldest
// go (the peer will be marked down, and peering resends what matters).
constexpr size_t kMaxQueued = 4096;
constexpr auto kConnectTimeout = std::chrono::milliseconds(1000);
}  // namespace

PeerLinks::PeerLinks(msg::Messenger &messenger, Logger &log,
                     std::function<std::string(int32_t)> address_of,
                     std::function<void(int32_t)> on_reset)
    : messenger_(messenger), log_(log), address_of_(std::move(address_of)),
      on_reset_(std::move(on_reset)) {
  connector_ = std::thread([this] {
    name_this_thread("osd-peer-conn");
    connector_loop();
  });
}

PeerLinks::~PeerLinks() { stop(); }

void PeerLinks::stop() {
  {
    std::lock_guard lk(mu_);
    if (stopping_ && !connector_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (connector_.joinable()) connector_.join();
  std::map<int32_t, Link> links;
  {
    std::lock_guard lk(mu_);
    links.swap(links_);
  }
  for (auto &[osd, l] : links)
    if (l.conn) l.conn->close("OSD stopping");
}

void PeerLinks::send(int32_t osd, msg::Message m, bool droppable) {
  std::unique_lock lk(mu_);
  if (stopping_) return;
  Link &l = links_[osd];
  if (l.conn && l.conn->is_open()) {
    msg::ConnectionRef c = l.conn;
    lk.unlock();
    // send() is thread-safe and never blocks; the messenger keeps order.
    if (c->send(std::move(m))) return;
    lk.lock();
    if (l.conn == c) l.conn.reset();
  }
  if (!droppable) {
    if (l.queue.size() >= kMaxQueued) l.queue.pop_front();
    l.queue.push_back(std::move(m));
  }
  if (!l.connecting) {
    l.connecting = true;
    to_connect_.push_back(osd);
    cv_.notify_all();
  }
}

void PeerLinks::reset(int32_t osd) {
  msg::ConnectionRef c;
  {
    std::lock_guard lk(mu_);
    auto it = links_.find(osd);
    if (it == links_.end()) return;
    c = std::move(it->second.conn);
    it->second.queue.clear();
    it->second.generation++;
  }
  if (c) c->close("peer osd." + std::to_string(osd) + " went down or moved");
}

bool PeerLinks::on_close(const msg::ConnectionRef &conn) {
  int32_t osd = -1;
  {
    std::lock_guard lk(mu_);
    for (auto &[id, l] : links_) {
      if (l.conn == conn) {
        l.conn.reset();
        osd = id;
        break;
      }
    }
  }
  if (osd < 0) return false;
  if (on_reset_) on_reset_(osd);
  return true;
}

void PeerLinks::connector_loop() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    if (to_connect_.empty()) {
      cv_.wait(lk);
      continue;
    }
    int32_t osd = to_connect_.front();
    to_connect_.pop_front();
    uint64_t gen = links_[osd].generation;
    lk.unlock();
    std::string addr = address_of_(osd);
    Result<msg::ConnectionRef> c = Status::Error(EHOSTUNREACH, "no address");
    if (!addr.empty()) c = messenger_.connect(addr, kConnectTimeout);
    lk.lock();
    Link &l = links_[osd];
    if (stopping_) {
      if (c.ok()) (*c)->close("OSD stopping");
      break;
    }
    if (!c.ok() || l.generation != gen) {
      if (!c.ok())
        log_.debug("osd", "connect to osd." + std::to_string(osd) + " at " + addr + ": " +
                               c.status().ToString());
      if (c.ok()) (*c)->close("superseded");
      // Queued messages wait for the next attempt (retry(), or the next send).
      l.connecting = false;
      continue;
    }
    l.conn = *c;
    l.addr = addr;
    l.connecting = false;
    // Flushed under the lock so that a concurrent send() cannot overtake
    // what was queued before it (Connection::send never blocks).
    for (msg::Message &m : l.queue) l.conn->send(std::move(m));
    l.queue.clear();
  }
}

void PeerLinks::retry() {
  std::lock_guard lk(mu_);
  for (auto &[osd, l] : links_) {
    if (!l.queue.empty() && !l.connecting && !(l.conn && l.conn->is_open())) {
      l.connecting = true;
      to_connect_.push_back(osd);
    }
  }
  cv_.notify_all();
}

}  // namespace strata::osd
