// rendezvous: flat weighted highest-random-weight hashing with failure
// domains.
//
// A CHOOSELEAF step ranks every eligible device under the start bucket by
// one weighted draw (ln(u) / weight for (x, device), the same draw straw2
// uses) and takes devices in rank order, skipping any whose failure domain
// is already used or which turns the input away (out, reweighted). The
// trade-off against crush: no hierarchy to descend, so adding or removing a
// device moves close to the optimal amount of data even across levels, but
// every mapping draws once per device (O(devices) instead of O(depth x
// fan-out)), so it suits small and medium clusters.
#include <memory>

#include "candidate_sets.h"
#include "draw.h"
#include "plugin_topology.h"
#include "rule_runner.h"
#include "strata/cpp/placement.hpp"

namespace strata::placement_plugin {
namespace {

bool contains(const int32_t *v, int n, int32_t id) {
  for (int i = 0; i < n; ++i)
    if (v[i] == id) return true;
  return false;
}

// Candidate sets up to this size rank from a buffer on the stack; larger
// ones rescan (same order, more hashing).
constexpr size_t kBuffered = 512;

// Rank order: smaller cost first, ties to the earlier candidate.
bool ranks_before(Cost a_cost, size_t a_index, Cost b_cost, size_t b_index) {
  return a_cost < b_cost || (a_cost == b_cost && a_index < b_index);
}

class RendezvousPlacement : public sdk::Placement {
 public:
  static std::unique_ptr<RendezvousPlacement> create(const sdk::PlacementMap &map,
                                                     const sdk::Logger &) {
    return std::unique_ptr<RendezvousPlacement>(new RendezvousPlacement(map));
  }

  int map(uint32_t rule_id, uint32_t x, uint32_t num_rep, int32_t *out,
          uint32_t cap) const override {
    const sdk::PlacementRule *rule = topo_.rule(rule_id);
    if (!rule) return -ENOENT;
    if (num_rep > STRATA_PLACEMENT_MAX_RESULT) return -EINVAL;
    size_t rule_pos = size_t(rule - topo_.map().rules.data());
    auto select = [&](const ChooseRequest &req, int32_t from, uint32_t in, int32_t *items,
                      int32_t *leaves, int n_before) {
      int b = topo_.bucket_index(from);
      const std::vector<Candidate> *set = b < 0 ? nullptr : sets_.find(rule_pos, req.step_index, b);
      if (!set) return n_before;
      return select_ranked(*set, in, req.count, items, leaves, n_before);
    };
    return run_rule(*rule, x, num_rep, out, cap, select);
  }

 private:
  explicit RendezvousPlacement(const sdk::PlacementMap &map) : topo_(map), sets_(topo_) {}

  // Takes candidates in rank order while they are acceptable; returns the
  // new total of items.
  static int select_ranked(const std::vector<Candidate> &set, uint32_t x, int count,
                           int32_t *items, int32_t *leaves, int n_before) {
    uint64_t seed = draw_seed(x, 0);
    int have = n_before;
    // Accepts c unless its domain is taken or its device turns x away.
    auto consider = [&](const Candidate &c) {
      if (contains(items, have, c.domain)) return false;
      if (c.is_device && !keeps_input(x, c.id, c.reweight)) return false;
      items[have] = c.domain;
      leaves[have] = c.id;
      ++have;
      return true;
    };
    size_t m = set.size();
    if (m <= kBuffered) {
      Cost cost[kBuffered];
      for (size_t i = 0; i < m; ++i) cost[i] = draw_cost(seed, set[i].key, set[i].inv_weight);
      while (have - n_before < count) {
        size_t best = 0;
        Cost best_cost = kInfiniteCost;
        for (size_t i = 0; i < m; ++i) {  // branch-free minimum
          bool better = cost[i] < best_cost;
          best_cost = better ? cost[i] : best_cost;
          best = better ? i : best;
        }
        if (best_cost == kInfiniteCost) break;
        cost[best] = kInfiniteCost;
        if (consider(set[best]))  // its domain is used up: drop the rest of it
          for (size_t i = 0; i < m; ++i)
            if (set[i].domain == set[best].domain) cost[i] = kInfiniteCost;
      }
      return have;
    }
    // Large sets: find each next candidate in rank order by rescanning.
    Cost last_cost = -1;
    size_t last_index = 0;
    while (have - n_before < count) {
      size_t best = m;
      Cost best_cost = kInfiniteCost;
      for (size_t i = 0; i < m; ++i) {
        Cost cost = draw_cost(seed, set[i].key, set[i].inv_weight);
        if (!ranks_before(last_cost, last_index, cost, i)) continue;
        if (best == m || ranks_before(cost, i, best_cost, best)) {
          best = i;
          best_cost = cost;
        }
      }
      if (best == m) break;
      consider(set[best]);
      last_cost = best_cost;
      last_index = best;
    }
    return have;
  }

  PluginTopology topo_;
  CandidateSets sets_;
};

}  // namespace
}  // namespace strata::placement_plugin

STRATA_PLACEMENT_PLUGIN(strata::placement_plugin::RendezvousPlacement, "rendezvous", "0.1.0",
                        "flat weighted rendezvous hashing with failure domains",
                        STRATA_PLACEMENT_CAP_DEVICE_CLASSES | STRATA_PLACEMENT_CAP_REWEIGHT |
                            STRATA_PLACEMENT_CAP_CHAINED_CHOOSE |
                            STRATA_PLACEMENT_CAP_MULTI_TAKE)
