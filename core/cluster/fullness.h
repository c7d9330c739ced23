// How full an OSD's disk is, as the monitor judges it from the OSD's
// reported usage against the cluster's ratios, and as every daemon and
// client reads it back from the cluster map (OsdInfo::fullness).
//
// The levels are ordered: each implies the ones below it. nearfull is a
// warning to the operator; backfillfull stops recovery and backfill from
// moving data onto the OSD; full stops new writes to every PG the OSD
// serves (deletes still go through, so that space can be freed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::cluster {

struct ClusterMap;

enum class Fullness : uint8_t { kNone = 0, kNearfull = 1, kBackfillfull = 2, kFull = 3 };

const char *fullness_name(Fullness f);  // "none", "nearfull", "backfillfull", "full"

struct FullRatios {
  double nearfull = 0.85;
  double backfillfull = 0.90;
  double full = 0.95;
};

// The level of `used` out of `total` bytes; kNone when total is unknown (0).
Fullness classify_usage(uint64_t used, uint64_t total, const FullRatios &r);

// The level to publish for an OSD now at `current`: up at once, but down
// only once usage is kFullnessHysteresis of the disk below the level's
// ratio, so that usage hovering at a ratio (stages in flight come and go)
// does not make a new map epoch with every beacon.
inline constexpr double kFullnessHysteresis = 0.02;
Fullness next_fullness(uint64_t used, uint64_t total, const FullRatios &r, Fullness current);

// Whether the ratios make sense: each within (0, 1] and
// nearfull <= backfillfull <= full.
Status check_ratios(const FullRatios &r);

// A ratio option's value ("0.85"), checked to lie within (0, 1].
Result<double> parse_ratio(std::string_view key, std::string_view text);

// The first OSD of `osds` the map marks at least `level` full, or -1.
int32_t first_at_least(const ClusterMap &m, const std::vector<int32_t> &osds, Fullness level);

}  // namespace strata::cluster
