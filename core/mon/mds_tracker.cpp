#include "mon/mds_tracker.h"

#include <cctype>

namespace strata::mon {

using cluster::ClusterMap;
using cluster::MdsInfo;
using cluster::MdsState;

std::string mds_name_of(const std::string &entity) {
  if (entity.rfind("mds.", 0) != 0 || entity.size() == 4 || entity.size() > 68) return {};
  std::string name = entity.substr(4);
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return {};
  return name;
}

const char *mds_state_name(MdsState s) {
  switch (s) {
    case MdsState::kStandby:
      return "standby";
    case MdsState::kReplay:
      return "replay";
    case MdsState::kActive:
      return "active";
  }
  return "unknown";
}

namespace {

void drop_assignment(MdsInfo &d) {
  d.state = MdsState::kStandby;
  d.fs_id = 0;
  d.incarnation = 0;
}

}  // namespace

bool MdsTracker::on_beacon(const ClusterMap &cur, const MdsBeaconInfo &b, const void *conn,
                           uint64_t now_ms, ClusterMap &next, std::vector<std::string> *events) {
  const std::string who = "mds." + b.name;
  auto known = cur.mds.find(b.name);
  if (known != cur.mds.end()) {
    const MdsInfo &m = known->second;
    // A zombie: acting for an incarnation the map has moved past. It is
    // not alive as far as the map is concerned; it learns from the map.
    if (b.incarnation != 0 && b.incarnation < m.incarnation) return false;
  }
  auto last_conn = conn_.find(b.name);
  bool same_conn = last_conn != conn_.end() && last_conn->second == conn;
  last_beacon_ms_[b.name] = now_ms;
  conn_[b.name] = conn;
  want_fs_[b.name] = b.want_fs;
  MdsStats st = b.stats;
  st.at_ms = now_ms;
  stats_[b.name] = st;

  bool changed = false;
  if (known == cur.mds.end()) {
    MdsInfo d;
    d.name = b.name;
    d.addr = b.addr;
    d.up_from = cur.epoch + 1;
    next.mds[b.name] = d;
    events->push_back(who + " is new, standby at " + b.addr);
    changed = true;
  } else {
    const MdsInfo &m = known->second;
    MdsInfo &d = next.mds[b.name];
    if (m.state != MdsState::kStandby && b.state == MdsState::kStandby && b.incarnation == 0 &&
        !same_conn) {
      // Restarted under the same name: the old instance is gone, its
      // filesystem must not wait for the grace.
      events->push_back(who + " restarted (beacons standby on a new session): dropping its " +
                        mds_state_name(m.state) + " of fs " + std::to_string(m.fs_id) +
                        " (incarnation " + std::to_string(m.incarnation) + ")");
      drop_assignment(d);
      d.up_from = cur.epoch + 1;
      changed = true;
    } else if (m.state == MdsState::kReplay && b.state == MdsState::kActive && b.fs_id == m.fs_id &&
               b.incarnation == m.incarnation) {
      d.state = MdsState::kActive;
      events->push_back(who + " is active for fs " + std::to_string(m.fs_id) + " (incarnation " +
                        std::to_string(m.incarnation) + ")");
      changed = true;
    }
    if (!b.addr.empty() && b.addr != d.addr) {
      events->push_back(who + " moved to " + b.addr);
      d.addr = b.addr;
      changed = true;
    }
  }
  if (assign(next, events)) changed = true;
  return changed;
}

bool MdsTracker::expire(uint64_t now_ms, uint64_t grace_ms, ClusterMap &next,
                        std::vector<std::string> *events) {
  std::vector<std::string> gone;
  for (const auto &[name, d] : next.mds) {
    auto it = last_beacon_ms_.find(name);
    uint64_t last = it == last_beacon_ms_.end() ? 0 : it->second;
    if (now_ms > last && now_ms - last > grace_ms) gone.push_back(name);
  }
  for (const std::string &name : gone) {
    const MdsInfo &d = next.mds[name];
    events->push_back("removing mds." + name + " (" + mds_state_name(d.state) +
                      (d.state == MdsState::kStandby ? "" : " for fs " + std::to_string(d.fs_id)) +
                      "): no beacon for more than " + std::to_string(grace_ms) + " ms");
    next.mds.erase(name);
    forget(name);
  }
  bool changed = !gone.empty();
  if (assign(next, events)) changed = true;
  return changed;
}

bool MdsTracker::assign(ClusterMap &next, std::vector<std::string> *events) const {
  bool changed = false;
  for (const auto &[id, fs] : next.filesystems) {
    bool served = false;
    for (const auto &[name, d] : next.mds)
      if (d.fs_id == id && d.state != MdsState::kStandby) served = true;
    if (served) continue;
    for (auto &[name, d] : next.mds) {
      if (d.state != MdsState::kStandby) continue;
      auto want = want_fs_.find(name);
      if (want != want_fs_.end() && !want->second.empty() && want->second != fs.name) continue;
      d.state = MdsState::kReplay;
      d.fs_id = id;
      d.incarnation = next.epoch + 1;
      events->push_back("mds." + name + " takes fs '" + fs.name + "' (replay, incarnation " +
                        std::to_string(d.incarnation) + ")");
      changed = true;
      break;
    }
  }
  return changed;
}

void MdsTracker::adopt(const ClusterMap &m, uint64_t now_ms) {
  for (const auto &[name, d] : m.mds) last_beacon_ms_[name] = now_ms;
}

void MdsTracker::excuse(uint64_t ms) {
  for (auto &[name, last] : last_beacon_ms_) last += ms;
}

void MdsTracker::forget(const std::string &name) {
  last_beacon_ms_.erase(name);
  conn_.erase(name);
  want_fs_.erase(name);
  stats_.erase(name);
}

}  // namespace strata::mon
