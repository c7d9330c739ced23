// Rate limit for log lines that any stranger can cause.
//
// Every connection that fails before authenticating (a port scanner, junk
// bytes, a wrong key) would otherwise write one WARN line: 25,000 junk
// connections grew a monitor's log by 3.4 MB. Lines are limited per peer
// address (the host, not host:port, since each connection has a new port):
// the first is logged, then at most one per interval, carrying the number
// of lines suppressed since the last one logged from that address.
//
// Memory is bounded: at most max_peers addresses (and the shared bucket
// below) are tracked; past that,
// addresses whose interval has ended are forgotten, and if every tracked
// address is still within its interval, new addresses share one bucket
// (logged as "other peers") until room frees up.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace strata::msg {

class PeerLogLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  struct Decision {
    bool log = false;         // write this line
    uint64_t suppressed = 0;  // lines from this peer dropped since the last one logged
    std::string key;          // the address the line was counted under
  };

  explicit PeerLogLimiter(std::chrono::milliseconds interval, std::size_t max_peers = 4096);

  // `peer` is "host:port" or "[v6]:port" (or anything: used whole if it has
  // no port). Thread-safe.
  Decision admit(const std::string &peer, Clock::time_point now = Clock::now());

  // The host part of "host:port" / "[v6]:port".
  static std::string host_of(const std::string &peer);

  std::size_t tracked() const;

  // The text to append to a logged line, e.g. " (37 more from 10.0.0.9
  // suppressed in the last 10 s)", or "" when nothing was suppressed.
  std::string suffix(const Decision &d) const;

 private:
  struct Entry {
    Clock::time_point last_logged;
    uint64_t suppressed = 0;
  };
  void prune_locked(Clock::time_point now);

  const std::chrono::milliseconds interval_;
  const std::size_t max_peers_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> peers_;  // GUARDED_BY(mu_)
};

}  // namespace strata::msg
