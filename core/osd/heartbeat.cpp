#include "osd/heartbeat.h"

namespace strata::osd {

void HeartbeatTracker::set_peers(const std::map<int32_t, uint64_t> &up_from, Clock::time_point now) {
  std::lock_guard lk(mu_);
  std::map<int32_t, Peer> next;
  for (const auto &[osd, from] : up_from) {
    auto it = peers_.find(osd);
    if (it != peers_.end() && it->second.up_from == from) {
      next[osd] = it->second;
    } else {
      Peer p;
      p.up_from = from;
      p.last_rx = now;
      next[osd] = p;
    }
  }
  peers_.swap(next);
}

void HeartbeatTracker::on_reply(int32_t osd, Clock::time_point now) {
  std::lock_guard lk(mu_);
  auto it = peers_.find(osd);
  if (it == peers_.end()) return;
  it->second.last_rx = now;
  if (it->second.reported) {
    it->second.reported = false;
    it->second.alive_again = true;
  }
}

std::vector<HeartbeatTracker::Report> HeartbeatTracker::due(Clock::time_point now,
                                                            std::chrono::milliseconds grace) {
  std::lock_guard lk(mu_);
  std::vector<Report> out;
  for (auto &[osd, p] : peers_) {
    auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_rx);
    if (p.alive_again) {
      p.alive_again = false;
      out.push_back({osd, 0, true});
      continue;
    }
    if (silent <= grace) continue;
    if (p.reported && now - p.last_report < grace) continue;
    p.reported = true;
    p.last_report = now;
    out.push_back({osd, static_cast<uint64_t>(silent.count()), false});
  }
  return out;
}

}  // namespace strata::osd
