#include "mon/pg_stats.h"

#include "placement/placement_map.h"

#include <cstdio>
#include <sstream>

namespace strata::mon {

void PgStatsTable::update(OsdStatEntry e) {
  auto &idx = index_[e.id];
  idx.clear();
  for (size_t i = 0; i < e.pgs.size(); ++i) idx[e.pgs[i].pg] = i;
  osds_[e.id] = std::move(e);
}

std::vector<PgRow> PgStatsTable::pgs(const cluster::MapView &view, int64_t pool) const {
  std::vector<PgRow> out;
  for (const auto &[pid, p] : view.map().pools) {
    if (pool >= 0 && int64_t(pid) != pool) continue;
    for (uint32_t seed = 0; seed < p.pg_num; ++seed) {
      PgRow row;
      row.pg = PgId{pid, seed};
      row.up = view.raw_set(row.pg);
      row.acting = view.acting(row.pg);
      row.state = row.acting.empty() ? "down" : "unknown";
      if (!row.acting.empty()) {
        auto it = index_.find(row.acting[0]);
        auto at =
            it == index_.end() ? std::map<PgId, size_t>::const_iterator() : it->second.find(row.pg);
        if (it != index_.end() && at != it->second.end()) {
          const PgStatEntry &s = osds_.at(row.acting[0]).pgs[at->second];
          row.state = s.acting == row.acting ? s.state : "peering";
          row.objects = s.objects;
          row.bytes = s.bytes;
          row.last_update = s.last_update;
          row.damaged = s.damaged;
          row.damaged_total = s.damaged_total;
          row.read_repairs = s.read_repairs;
        }
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

namespace {
// One line per fullness level, naming the OSDs and how full each is;
// returns whether any OSD is full (HEALTH_ERR).
bool add_fullness_warnings(const cluster::ClusterMap &m,
                           const std::map<int32_t, OsdStatEntry> &usage, ClusterSummary &s) {
  using cluster::Fullness;
  for (Fullness level : {Fullness::kFull, Fullness::kBackfillfull, Fullness::kNearfull}) {
    std::string names;
    size_t n = 0;
    for (const auto &[id, o] : m.osds) {
      if (o.fullness != level) continue;
      ++n;
      s.osds_by_fullness[cluster::fullness_name(level)].push_back(id);
      names += " osd." + std::to_string(id);
      auto u = usage.find(id);
      if (u != usage.end() && u->second.total_bytes)
        names += " (" + std::to_string(u->second.used_bytes * 100 / u->second.total_bytes) + "%)";
    }
    if (n == 0) continue;
    std::string what = level == Fullness::kFull           ? " refuse writes (ENOSPC)"
                       : level == Fullness::kBackfillfull ? " take no backfill"
                                                          : "";
    s.warnings.push_back(std::to_string(n) + " " + cluster::fullness_name(level) + " osd(s)" +
                         what + ":" + names);
  }
  return s.osds_by_fullness.count("full") != 0;
}
}  // namespace

ClusterSummary PgStatsTable::summary(const cluster::MapView &view) const {
  const cluster::ClusterMap &m = view.map();
  ClusterSummary s;
  std::vector<std::string> down;
  for (const auto &[id, o] : m.osds) {
    ++s.osds;
    if (o.up)
      ++s.osds_up;
    else if (o.in)
      down.push_back("osd." + std::to_string(id));
    if (o.in) ++s.osds_in;
  }
  s.pools = uint32_t(m.pools.size());
  bool error = false;
  for (const PgRow &r : pgs(view)) {
    ++s.pgs;
    ++s.pgs_by_state[r.state];
    s.objects += r.objects;
    s.bytes += r.bytes;
    if (r.state == "down") error = true;
    s.damaged_total += r.damaged_total;
    s.read_repairs += r.read_repairs;
    for (const auto &[oid, why] : r.damaged) s.damaged.push_back({r.pg, oid, why});
  }
  for (const auto &[id, e] : osds_) {
    const cluster::OsdInfo *o = m.osd(id);
    if (!o || !o->up) continue;
    s.used_bytes += e.used_bytes;
    s.total_bytes += e.total_bytes;
    for (const std::string &w : e.warnings)
      s.warnings.push_back("osd." + std::to_string(id) + ": " + w);
  }
  if (!down.empty()) {
    std::string w = std::to_string(down.size()) + " OSD(s) down:";
    for (const std::string &d : down) w += " " + d;
    s.warnings.insert(s.warnings.begin(), w);
  }
  uint32_t usable = 0;
  for (const auto &[id, o] : m.osds)
    if (o.up && o.in) ++usable;
  for (const auto &[id, p] : m.pools)
    if (p.size > usable)
      s.warnings.push_back("pool '" + p.name + "' wants " + std::to_string(p.size) +
                           " replicas but only " + std::to_string(usable) +
                           " OSD(s) are up and in");
  // A clean PG whose scrub found damage has its own error below.
  auto clean_state = [](const std::string &st) {
    return st == "active+clean" || st == "active+clean+inconsistent";
  };
  uint32_t clean = 0;
  for (const auto &[state, n] : s.pgs_by_state)
    if (clean_state(state)) clean += n;
  if (clean < s.pgs) {
    std::string w = std::to_string(s.pgs - clean) + " PG(s) not active+clean:";
    for (const auto &[state, n] : s.pgs_by_state)
      if (!clean_state(state)) w += " " + std::to_string(n) + " " + state;
    s.warnings.push_back(w);
  }
  if (s.damaged_total > 0) {
    // Data the cluster cannot vouch for: an error until a repair or a
    // clean scrub, with each object named.
    error = true;
    s.warnings.push_back(std::to_string(s.damaged_total) +
                         " damaged object(s) found by scrub or reads (strata pg repair PG):");
    for (const ClusterSummary::Damaged &d : s.damaged)
      s.warnings.push_back("  pg " + placement::format_pg(d.pg) + " object '" + d.oid + "': " + d.why);
    if (s.damaged.size() < s.damaged_total)
      s.warnings.push_back("  ... and " + std::to_string(s.damaged_total - s.damaged.size()) + " more");
  }
  if (m.pools.size() && s.osds_up == 0) error = true;
  error |= add_fullness_warnings(m, osds_, s);
  s.health = error ? "HEALTH_ERR" : s.warnings.empty() ? "HEALTH_OK" : "HEALTH_WARN";
  return s;
}

json::Value ClusterSummary::to_json() const {
  json::Value j;
  j.set("health", health);
  json::Value w = json::Array{};
  for (const std::string &x : warnings) w.push(x);
  j.set("warnings", w);
  json::Value o;
  o.set("total", osds);
  o.set("up", osds_up);
  o.set("in", osds_in);
  j.set("osds", o);
  j.set("pools", pools);
  json::Value p;
  p.set("total", pgs);
  json::Value by = json::Object{};
  for (const auto &[state, n] : pgs_by_state) by.set(state, n);
  p.set("by_state", by);
  j.set("pgs", p);
  j.set("objects", objects);
  j.set("bytes", bytes);
  j.set("used_bytes", used_bytes);
  j.set("total_bytes", total_bytes);
  json::Value full = json::Object{};
  for (const auto &[level, ids] : osds_by_fullness) {
    json::Value l = json::Array{};
    for (int32_t id : ids) l.push(id);
    full.set(level, l);
  }
  j.set("fullness", full);
  json::Value d = json::Array{};
  for (const Damaged &x : damaged) {
    json::Value o;
    o.set("pgid", placement::format_pg(x.pg));
    o.set("oid", x.oid);
    o.set("reason", x.why);
    d.push(std::move(o));
  }
  j.set("damaged_objects", d);
  j.set("damaged_total", damaged_total);
  j.set("read_repairs", read_repairs);
  return j;
}

namespace {
std::string human_bytes(uint64_t b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}
}  // namespace

std::string ClusterSummary::to_text(const cluster::ClusterMap &m) const {
  std::ostringstream os;
  os << "  cluster:\n    id:     " << m.fsid << "\n    health: " << health << "\n";
  for (const std::string &w : warnings) os << "            " << w << "\n";
  os << "\n  services:\n    mon: 1 daemon, map epoch " << m.epoch << "\n    osd: " << osds
     << " osds: " << osds_up << " up, " << osds_in << " in\n";
  os << "\n  data:\n    pools:   " << pools << " pools, " << pgs << " pgs\n    objects: " << objects
     << " objects, " << human_bytes(bytes) << "\n    usage:   " << human_bytes(used_bytes)
     << " used, " << human_bytes(total_bytes > used_bytes ? total_bytes - used_bytes : 0) << " / "
     << human_bytes(total_bytes) << " avail\n    pgs:     ";
  bool first = true;
  for (const auto &[state, n] : pgs_by_state) {
    if (!first) os << "\n             ";
    first = false;
    os << n << " " << state;
  }
  if (first) os << "none";
  os << "\n";
  if (read_repairs) os << "    repair:  " << read_repairs << " object copies repaired after failed reads\n";
  return os.str();
}

}  // namespace strata::mon
