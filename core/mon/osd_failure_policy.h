// When the monitor believes that an OSD is down, and when it stops letting
// a flapping OSD back in. Pure functions of the map and the clock, so that
// the rules are tested without a network.
//
// Reporters: a peer report marks an OSD down only when the OSDs reporting
// it sit in at least `min_down_reporters` distinct failure domains (the
// placement-map bucket type `reporter_level`, "host" by default). One host
// cut off from its peers then cannot take the others down: it is a single
// domain, while the majority that reports it spans several.
//
// Small clusters: the domains that count are those of the OSDs that could
// report the target (up, not the target). When they are fewer than
// min_down_reporters (all OSDs on one host, as in tests and `strata up`),
// the rule falls back to the OSD level: min(min_down_reporters, possible
// reporters) distinct OSDs must report. A cluster of two OSDs therefore
// needs one report, as it always did; the monitor's own view (beacons, the
// OSD's connection) still marks a silent OSD down on its own.
//
// Beacons do not outvote reports: an OSD that reaches the monitor but not
// its peers cannot serve replicated writes, so enough reporters win over
// its beacons. Its beacons only keep it from being marked down by the
// monitor itself.
//
// Flapping: an OSD marked down `flap_max_markdowns` times within
// `flap_window_ms` because of reports or missing beacons (a crash that
// closes the connection does not count: that is not flapping) is held
// down: its boots are refused until an operator releases it (`strata osd
// unhold N`) or `flap_hold_ms` passes (0: only the operator).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "cluster/cluster_map.h"

namespace strata::mon {

struct FailurePolicyOptions {
  uint32_t min_down_reporters = 2;
  std::string reporter_level = "host";  // a placement type name; "osd": every OSD its own
  uint32_t flap_max_markdowns = 5;      // 0: never hold
  uint64_t flap_window_ms = 600000;
  uint64_t flap_hold_ms = 600000;  // 0: until an operator releases it
};

// OSD id -> the id of its failure domain at `level` (the bucket of that type
// above it; the OSD itself when level is "osd" or it has no such bucket).
std::map<int32_t, int32_t> failure_domains(const cluster::ClusterMap &m, const std::string &level);

struct ReporterVerdict {
  bool enough = false;
  std::string why;  // "reporters osd.0, osd.1 from 2 host(s) (2 needed)"
};

// Whether `reporters` (OSD ids) justify marking `target` down under `m`.
ReporterVerdict judge_reporters(const cluster::ClusterMap &m, int32_t target,
                                const std::set<int32_t> &reporters,
                                const FailurePolicyOptions &opts);

// Markdown history and holds. REQUIRES: external synchronisation.
class FlapGuard {
 public:
  struct Hold {
    uint64_t since_ms = 0;
    uint32_t markdowns = 0;  // within the window when the hold began
  };

  explicit FlapGuard(FailurePolicyOptions opts) : opts_(std::move(opts)) {}

  // Records a markdown that counts as flapping; true when it starts a hold.
  bool on_markdown(int32_t osd, uint64_t now_ms);
  // Whether `osd` is held now. Lifts a hold whose time is up (and says so
  // through *expired).
  bool held(int32_t osd, uint64_t now_ms, bool *expired = nullptr);
  // Lifts a hold and forgets the history; false when it was not held.
  bool release(int32_t osd);
  const std::map<int32_t, Hold> &holds() const { return holds_; }
  // When the hold of `osd` ends by itself (0: never).
  uint64_t hold_until(const Hold &h) const {
    return opts_.flap_hold_ms ? h.since_ms + opts_.flap_hold_ms : 0;
  }
  const FailurePolicyOptions &options() const { return opts_; }

  // Holds as text for the map store's meta ("2@1700000000000@5,4@..."), so
  // that a monitor restart does not let a held OSD back in.
  std::string encode_holds() const { return encode_holds(holds_); }
  static std::string encode_holds(const std::map<int32_t, Hold> &holds);
  void restore_holds(const std::string &text);

 private:
  FailurePolicyOptions opts_;
  std::map<int32_t, std::deque<uint64_t>> markdowns_;
  std::map<int32_t, Hold> holds_;
};

// The meta key of the holds.
constexpr const char *kMetaFlapHolds = "osd_flap_holds";

}  // namespace strata::mon
