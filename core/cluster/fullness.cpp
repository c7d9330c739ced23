#include "cluster/fullness.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "cluster/cluster_map.h"

namespace strata::cluster {

const char *fullness_name(Fullness f) {
  switch (f) {
    case Fullness::kNone:
      return "none";
    case Fullness::kNearfull:
      return "nearfull";
    case Fullness::kBackfillfull:
      return "backfillfull";
    case Fullness::kFull:
      return "full";
  }
  return "unknown";
}

Fullness classify_usage(uint64_t used, uint64_t total, const FullRatios &r) {
  if (total == 0) return Fullness::kNone;
  double ratio = static_cast<double>(used) / static_cast<double>(total);
  if (ratio >= r.full) return Fullness::kFull;
  if (ratio >= r.backfillfull) return Fullness::kBackfillfull;
  if (ratio >= r.nearfull) return Fullness::kNearfull;
  return Fullness::kNone;
}

Fullness next_fullness(uint64_t used, uint64_t total, const FullRatios &r, Fullness current) {
  Fullness now = classify_usage(used, total, r);
  if (now >= current || total == 0) return now;
  auto margin = static_cast<uint64_t>(static_cast<double>(total) * kFullnessHysteresis);
  Fullness sticky = classify_usage(used + margin, total, r);
  return std::min(current, std::max(now, sticky));
}

Status check_ratios(const FullRatios &r) {
  for (double v : {r.nearfull, r.backfillfull, r.full})
    if (!(v > 0 && v <= 1))
      return Status::Error(EINVAL, "full ratios must lie in (0, 1], got " + std::to_string(v));
  if (r.nearfull > r.backfillfull || r.backfillfull > r.full)
    return Status::Error(EINVAL, "full ratios must satisfy nearfull (" +
                                     std::to_string(r.nearfull) + ") <= backfillfull (" +
                                     std::to_string(r.backfillfull) + ") <= full (" +
                                     std::to_string(r.full) + ")");
  return Status::OK();
}

Result<double> parse_ratio(std::string_view key, std::string_view text) {
  std::string s(text);
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || end != s.c_str() + s.size() || !(v > 0 && v <= 1))
    return Status::Error(
        EINVAL, std::string(key) + " must be a ratio in (0, 1] such as 0.95, not '" + s + "'");
  return v;
}

int32_t first_at_least(const ClusterMap &m, const std::vector<int32_t> &osds, Fullness level) {
  for (int32_t id : osds) {
    const OsdInfo *o = m.osd(id);
    if (o && o->fullness >= level) return id;
  }
  return -1;
}

}  // namespace strata::cluster
