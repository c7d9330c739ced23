// Which peers answer our heartbeats. The OSD pings every up peer each
// heartbeat interval; a peer that has not answered for heartbeat_grace_ms
// is reported to the monitor (again every grace period while it stays
// silent and up in the map); a reported peer that answers again is
// reported alive (a retraction).
//
// Threading: thread-safe (replies arrive on messenger threads, the tick
// runs on the OSD's control thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace strata::osd {

class HeartbeatTracker {
 public:
  using Clock = std::chrono::steady_clock;

  // The peers to watch: up OSDs (not this one) with their up_from epoch. A
  // new peer, or one that rebooted (new up_from), gets a full grace period.
  void set_peers(const std::map<int32_t, uint64_t> &up_from, Clock::time_point now);
  void on_reply(int32_t osd, Clock::time_point now);

  struct Report {
    int32_t osd;
    uint64_t silent_ms;
    bool still_alive;  // retraction of an earlier failure report
  };
  // Failure reports to send now (and retractions).
  std::vector<Report> due(Clock::time_point now, std::chrono::milliseconds grace);

 private:
  struct Peer {
    uint64_t up_from = 0;
    Clock::time_point last_rx;
    Clock::time_point last_report;
    bool reported = false;
    bool alive_again = false;
  };
  std::mutex mu_;
  std::map<int32_t, Peer> peers_;
};

}  // namespace strata::osd
