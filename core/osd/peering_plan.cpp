#include "osd/peering_plan.h"

#include <algorithm>
#include <unordered_map>

namespace strata::osd {

PriorSet build_prior_set(const std::vector<int32_t> &acting, const std::vector<PastInterval> &intervals,
                         uint64_t les_bound, const std::function<bool(int32_t)> &is_up) {
  PriorSet ps;
  for (int32_t o : acting) ps.probe.insert(o);
  for (const PastInterval &pi : intervals) {
    if (pi.last < les_bound) continue;
    bool any_up = false;
    for (int32_t o : pi.acting) {
      if (is_up(o)) {
        ps.probe.insert(o);
        any_up = true;
      }
    }
    if (!any_up && pi.maybe_went_rw) ps.blocked.push_back(pi);
  }
  return ps;
}

void merge_intervals(std::vector<PastInterval> &into, const std::vector<PastInterval> &more) {
  for (const PastInterval &m : more)
    if (std::find(into.begin(), into.end(), m) == into.end()) into.push_back(m);
  std::sort(into.begin(), into.end(), [](const PastInterval &a, const PastInterval &b) {
    return a.first != b.first ? a.first < b.first : a.last < b.last;
  });
}

uint64_t max_les(const std::map<int32_t, PeerReport> &reports) {
  uint64_t les = 0;
  for (const auto &[osd, r] : reports)
    if (r.has_pg) les = std::max(les, r.info.les);
  return les;
}

namespace {

// Ranks candidates for the authoritative log: the newest last_update; then
// the longest log (more peers can recover from it without a backfill); then
// the primary itself (nothing to pull).
bool better_auth(int32_t primary, int32_t a, const PeerReport &ra, int32_t b, const PeerReport &rb) {
  if (ra.info.last_update != rb.info.last_update) return ra.info.last_update > rb.info.last_update;
  if (ra.info.log_tail != rb.info.log_tail) return ra.info.log_tail < rb.info.log_tail;
  if ((a == primary) != (b == primary)) return a == primary;
  return a < b;
}

// The newest version the peer's log shares with the authoritative one, or
// nothing when they cannot be lined up (the peer needs a backfill).
std::optional<EVersion> common_point(const PeerReport &peer, const PeeringPlan &plan,
                                     const std::unordered_map<uint64_t, EVersion> &auth_versions) {
  auto in_auth = [&](const EVersion &v) {
    auto it = auth_versions.find(v.version);
    return it != auth_versions.end() && it->second == v;
  };
  for (auto it = peer.log.rbegin(); it != peer.log.rend(); ++it) {
    // Older than the authoritative log reaches: assumed shared (both logs
    // agreed on it when it was written, before any divergence we can see).
    if (it->version <= plan.log_tail) return it->version;
    if (in_auth(it->version)) return it->version;
  }
  const EVersion &t = peer.info.log_tail;
  if (t <= plan.log_tail || in_auth(t)) return t;
  return std::nullopt;
}

}  // namespace

PeeringPlan plan_peering(int32_t primary, const std::vector<int32_t> &acting,
                         const std::map<int32_t, PeerReport> &reports,
                         const std::vector<PastInterval> &intervals) {
  PeeringPlan plan;
  // 1. Every interval since the last activation that may have taken writes
  //    must be represented by at least one OSD that answered.
  uint64_t les = max_les(reports);
  for (const PastInterval &pi : intervals) {
    if (pi.last < les || !pi.maybe_went_rw) continue;
    bool heard = std::any_of(pi.acting.begin(), pi.acting.end(),
                             [&](int32_t o) { return reports.count(o) != 0; });
    if (!heard) {
      plan.outcome = PeeringPlan::Outcome::kDown;
      plan.detail = "no answer from any OSD of interval " + std::to_string(pi.first) + "-" +
                    std::to_string(pi.last) + " which may have accepted writes";
      return plan;
    }
  }

  // 2. The authoritative log: the best complete copy.
  bool any_pg = false;
  const PeerReport *auth = nullptr;
  for (const auto &[osd, r] : reports) {
    any_pg |= r.has_pg;
    if (!r.has_pg || !r.info.backfill_complete) continue;
    if (!auth || better_auth(primary, osd, r, plan.auth, *auth)) {
      auth = &r;
      plan.auth = osd;
    }
  }
  PeerReport fresh;  // a brand-new PG: nobody has it; the primary starts it empty
  fresh.has_pg = true;
  if (!auth) {
    if (any_pg) {
      plan.outcome = PeeringPlan::Outcome::kIncomplete;
      plan.detail = "every copy that answered is an unfinished backfill";
      return plan;
    }
    auth = &fresh;
    plan.auth = primary;
  }
  plan.last_update = auth->info.last_update;
  plan.log_tail = auth->info.log_tail;
  plan.auth_log = auth->log;

  std::unordered_map<uint64_t, EVersion> auth_versions;
  std::unordered_map<std::string, const LogEntry *> auth_latest;  // newest entry per object
  for (const LogEntry &e : plan.auth_log) {
    auth_versions[e.version.version] = e.version;
    auth_latest[e.oid] = &e;
  }
  auto need_for = [&](const std::string &oid) {
    auto it = auth_latest.find(oid);
    if (it == auth_latest.end()) return MissingItem{plan.log_tail, false};
    return MissingItem{it->second->version, it->second->op == LogOp::kDelete};
  };

  // 3. What each acting member needs.
  for (int32_t osd : acting) {
    auto rit = reports.find(osd);
    PeerReport none;
    const PeerReport &r = rit != reports.end() && rit->second.has_pg ? rit->second : none;
    PeerRecovery rec;
    if (osd == plan.auth) {
      rec.rewind_to = plan.last_update;
      rec.missing = r.missing;
      plan.peers[osd] = std::move(rec);
      continue;
    }
    std::optional<EVersion> common;
    if (r.info.backfill_complete && r.info.last_update >= plan.log_tail)
      common = common_point(r, plan, auth_versions);
    if (!common) {
      rec.backfill = true;
      rec.append = plan.auth_log;
      plan.peers[osd] = std::move(rec);
      continue;
    }
    rec.rewind_to = *common;
    rec.missing = r.missing;
    for (const LogEntry &e : r.log)
      if (e.version > *common) rec.missing[e.oid] = need_for(e.oid);  // divergent
    for (const LogEntry &e : plan.auth_log) {
      if (e.version <= *common) continue;
      rec.append.push_back(e);
      rec.missing[e.oid] = need_for(e.oid);
    }
    // Objects it already lacked may have changed again since.
    for (auto &[oid, item] : rec.missing)
      if (auth_latest.count(oid)) item = need_for(oid);
    plan.peers[osd] = std::move(rec);
  }
  return plan;
}

}  // namespace strata::osd
