#include "candidate_sets.h"

#include <functional>

#include "draw.h"

namespace strata::placement_plugin {

CandidateSets::CandidateSets(const PluginTopology &topo) {
  const auto &rules = topo.map().rules;
  index_.resize(rules.size());
  for (size_t rp = 0; rp < rules.size(); ++rp) {
    const auto &steps = rules[rp].steps;
    index_[rp].resize(steps.size());
    std::vector<int> working;  // bucket indexes the next step may start from
    int cls = kAllClasses;
    for (size_t si = 0; si < steps.size(); ++si) {
      const auto &s = steps[si];
      if (s.op == STRATA_PLACEMENT_STEP_TAKE) {
        working = {topo.bucket_index(s.arg1)};
        cls = s.arg2;
      } else if (s.op == STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN ||
                 s.op == STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN) {
        bool leaf = s.op == STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN && s.arg2 != 0;
        uint32_t type = uint32_t(s.arg2);
        std::vector<int> next;
        index_[rp][si].assign(topo.n_buckets(), -1);
        for (int b : working) {
          std::vector<Candidate> c = collect(topo, b, type, cls, leaf);
          if (!leaf && type != 0)
            for (const Candidate &cand : c) next.push_back(topo.bucket_index(cand.id));
          index_[rp][si][size_t(b)] = int(sets_.size());
          sets_.push_back(std::move(c));
        }
        working = std::move(next);
      } else {
        working.clear();
      }
    }
  }
}

std::vector<Candidate> CandidateSets::collect(const PluginTopology &topo, int bucket,
                                              uint32_t type, int cls, bool leaf) const {
  std::vector<Candidate> out;
  const auto &buckets = topo.map().buckets;
  // Depth-first in child order, so the list (and the tie-breaking by
  // position) is the same on every machine.
  std::function<void(int, int32_t)> walk = [&](int b, int32_t domain) {
    const auto &bk = buckets[size_t(b)];
    for (size_t i = 0; i < bk.items.size(); ++i) {
      uint64_t w = topo.child_weight(b, i, cls);
      if (w == 0) continue;
      int32_t id = bk.items[i];
      if (id >= 0) {
        bool wanted = leaf ? domain != 0 : type == 0;
        if (wanted)
          out.push_back({item_key(id), id, leaf ? domain : id, inverse_weight(w), topo.device_reweight(id), 1});
        continue;
      }
      int child = topo.bucket_index(id);
      uint32_t child_type = buckets[size_t(child)].type;
      if (!leaf && child_type == type) {
        out.push_back({item_key(id), id, id, inverse_weight(w), STRATA_PLACEMENT_WEIGHT_ONE, 0});
        continue;
      }
      walk(child, leaf && child_type == type ? id : domain);
    }
  };
  walk(bucket, 0);
  return out;
}

}  // namespace strata::placement_plugin
