// Peering decisions as pure functions: which OSDs a primary must hear from
// (the prior set), whether the PG can go active at all, whose log is
// authoritative, and what every acting member needs to catch up with it
// (log-based recovery of the objects the log says changed, or a backfill
// when its log does not reach back far enough). No I/O: the PG feeds in
// what its peers reported and carries out the plan.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "osd/types.h"

namespace strata::osd {

// What one OSD reported about the PG (a PgNotify, or the primary itself).
struct PeerReport {
  bool has_pg = false;
  PgInfo info;
  std::vector<LogEntry> log;  // entries after info.log_tail, oldest first
  MissingSet missing;
};

struct PriorSet {
  std::set<int32_t> probe;  // up OSDs to query (acting included)
  // Intervals that may have accepted writes and none of whose members is
  // up: their writes may exist nowhere else, so the PG must wait.
  std::vector<PastInterval> blocked;
};

// `les_bound`: intervals that ended before it are settled (a later
// activation saw their writes).
PriorSet build_prior_set(const std::vector<int32_t> &acting, const std::vector<PastInterval> &intervals,
                         uint64_t les_bound, const std::function<bool(int32_t)> &is_up);

// Adds the intervals of `more` that `into` lacks, kept sorted by first epoch.
void merge_intervals(std::vector<PastInterval> &into, const std::vector<PastInterval> &more);

// What one acting member must do to match the authoritative log.
struct PeerRecovery {
  bool backfill = false;   // copy every object by comparing listings
  EVersion rewind_to;      // drop own entries newer than this (divergent)
  std::vector<LogEntry> append;  // then append these (authoritative)
  MissingSet missing;      // objects it lacks once the log is merged
};

struct PeeringPlan {
  enum class Outcome { kActivate, kDown, kIncomplete };
  Outcome outcome = Outcome::kActivate;
  std::string detail;      // why not, for logs and `status`
  int32_t auth = -1;
  EVersion last_update, log_tail;  // of the authoritative log
  std::vector<LogEntry> auth_log;
  std::map<int32_t, PeerRecovery> peers;  // every acting member, primary included
};

// `reports` holds every OSD that answered (acting members must all be
// there; others are strays that may hold the authoritative copy).
// `intervals`: the PG's past intervals merged from every source.
PeeringPlan plan_peering(int32_t primary, const std::vector<int32_t> &acting,
                         const std::map<int32_t, PeerReport> &reports,
                         const std::vector<PastInterval> &intervals);

// The highest last-epoch-started among reports that hold the PG.
uint64_t max_les(const std::map<int32_t, PeerReport> &reports);

}  // namespace strata::osd
