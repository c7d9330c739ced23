#include "msg/peer_log_limiter.h"

namespace strata::msg {

namespace {
const char *const kOverflowKey = "other peers";
}

PeerLogLimiter::PeerLogLimiter(std::chrono::milliseconds interval, std::size_t max_peers)
    : interval_(interval), max_peers_(max_peers < 1 ? 1 : max_peers) {}

std::string PeerLogLimiter::host_of(const std::string &peer) {
  if (!peer.empty() && peer.front() == '[') {
    auto close = peer.find(']');
    if (close != std::string::npos) return peer.substr(1, close - 1);
    return peer;
  }
  auto colon = peer.rfind(':');
  // More than one colon without brackets: a bare IPv6 address, no port.
  if (colon == std::string::npos || peer.find(':') != colon) return peer;
  return peer.substr(0, colon);
}

void PeerLogLimiter::prune_locked(Clock::time_point now) {
  for (auto it = peers_.begin(); it != peers_.end();) {
    // An address whose interval ended would log its next line at once
    // anyway; forgetting it loses at most the count that line would carry.
    if (now - it->second.last_logged >= interval_)
      it = peers_.erase(it);
    else
      ++it;
  }
}

PeerLogLimiter::Decision PeerLogLimiter::admit(const std::string &peer, Clock::time_point now) {
  std::string key = host_of(peer);
  std::lock_guard lk(mu_);
  auto it = peers_.find(key);
  if (it == peers_.end()) {
    if (peers_.size() >= max_peers_) prune_locked(now);
    if (peers_.size() >= max_peers_) {
      key = kOverflowKey;
      it = peers_.find(key);
    }
  }
  if (it == peers_.end()) {
    peers_.emplace(key, Entry{now, 0});
    return {true, 0, key};
  }
  Entry &e = it->second;
  if (now - e.last_logged < interval_) {
    ++e.suppressed;
    return {false, 0, key};
  }
  Decision d{true, e.suppressed, key};
  e.last_logged = now;
  e.suppressed = 0;
  return d;
}

std::size_t PeerLogLimiter::tracked() const {
  std::lock_guard lk(mu_);
  return peers_.size();
}

std::string PeerLogLimiter::suffix(const Decision &d) const {
  if (d.suppressed == 0) return "";
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(interval_).count();
  std::string window =
      secs >= 1 ? std::to_string(secs) + " s" : std::to_string(interval_.count()) + " ms";
  return " (" + std::to_string(d.suppressed) + " more like it from " + d.key +
         " suppressed; at most one line per " + window + " per address)";
}

}  // namespace strata::msg
