#include "mon/osd_failure_policy.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace strata::mon {

std::map<int32_t, int32_t> failure_domains(const cluster::ClusterMap &m, const std::string &level) {
  const placement::PlacementMap &pm = m.placement;
  const placement::TypeDef *type = level == "osd" ? nullptr : pm.type_by_name(level);
  std::map<int32_t, int32_t> parent;
  for (const placement::Bucket &b : pm.buckets)
    for (int32_t item : b.items) parent.emplace(item, b.id);
  std::map<int32_t, int32_t> out;
  for (const auto &[id, o] : m.osds) {
    int32_t domain = id;
    if (type) {
      // Walk up; the depth bound guards against a malformed (cyclic) map.
      int32_t item = id;
      for (int depth = 0; depth < 64; ++depth) {
        auto p = parent.find(item);
        if (p == parent.end()) break;
        item = p->second;
        const placement::Bucket *b = pm.bucket(item);
        if (b && b->type == type->id) {
          domain = item;
          break;
        }
      }
    }
    out[id] = domain;
  }
  return out;
}

namespace {

std::string osd_list(const std::set<int32_t> &ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "osd." : ", osd.") + std::to_string(id);
  return s;
}

}  // namespace

ReporterVerdict judge_reporters(const cluster::ClusterMap &m, int32_t target,
                                const std::set<int32_t> &reporters,
                                const FailurePolicyOptions &opts) {
  std::map<int32_t, int32_t> domain = failure_domains(m, opts.reporter_level);
  // Who could report the target at all, and from how many domains.
  std::set<int32_t> possible, possible_domains;
  for (const auto &[id, o] : m.osds)
    if (o.up && id != target) {
      possible.insert(id);
      possible_domains.insert(domain[id]);
    }
  std::set<int32_t> counted, counted_domains;
  for (int32_t r : reporters)
    if (possible.count(r)) {
      counted.insert(r);
      counted_domains.insert(domain[r]);
    }
  uint32_t want = std::max<uint32_t>(opts.min_down_reporters, 1);
  ReporterVerdict v;
  std::string from =
      "reports from " + (counted.empty() ? std::string("nobody") : osd_list(counted));
  if (possible_domains.size() >= want) {
    v.enough = counted_domains.size() >= want;
    v.why = from + " in " + std::to_string(counted_domains.size()) + " " + opts.reporter_level +
            "(s), " + std::to_string(want) + " needed";
  } else {
    // Too few domains to ask for `want` of them (one host, or a level the
    // map does not have): count OSDs, as many as there can be.
    uint32_t need = std::max<uint32_t>(1, std::min<uint32_t>(want, uint32_t(possible.size())));
    v.enough = counted.size() >= need;
    v.why = from + ", " + std::to_string(need) + " OSD(s) needed (only " +
            std::to_string(possible_domains.size()) + " " + opts.reporter_level +
            "(s) could report)";
  }
  return v;
}

bool FlapGuard::on_markdown(int32_t osd, uint64_t now_ms) {
  if (opts_.flap_max_markdowns == 0) return false;
  auto &times = markdowns_[osd];
  times.push_back(now_ms);
  while (!times.empty() && now_ms > times.front() && now_ms - times.front() > opts_.flap_window_ms)
    times.pop_front();
  if (holds_.count(osd) || times.size() < opts_.flap_max_markdowns) return false;
  holds_[osd] = Hold{now_ms, uint32_t(times.size())};
  times.clear();
  return true;
}

bool FlapGuard::held(int32_t osd, uint64_t now_ms, bool *expired) {
  if (expired) *expired = false;
  auto it = holds_.find(osd);
  if (it == holds_.end()) return false;
  uint64_t until = hold_until(it->second);
  if (until && now_ms >= until) {
    holds_.erase(it);
    if (expired) *expired = true;
    return false;
  }
  return true;
}

bool FlapGuard::release(int32_t osd) {
  markdowns_.erase(osd);
  return holds_.erase(osd) > 0;
}

std::string FlapGuard::encode_holds(const std::map<int32_t, Hold> &holds) {
  std::string s;
  for (const auto &[id, h] : holds)
    s += (s.empty() ? "" : ",") + std::to_string(id) + "@" + std::to_string(h.since_ms) + "@" +
         std::to_string(h.markdowns);
  return s;
}

void FlapGuard::restore_holds(const std::string &text) {
  holds_.clear();
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char *end = nullptr;
    long id = std::strtol(part.c_str(), &end, 10);
    if (end == part.c_str() || *end != '@' || id < 0) continue;
    unsigned long long since = std::strtoull(end + 1, &end, 10);
    unsigned long n = *end == '@' ? std::strtoul(end + 1, &end, 10) : 0;
    holds_[int32_t(id)] = Hold{since, uint32_t(n)};
  }
}

}  // namespace strata::mon
