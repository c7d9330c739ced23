#include "placement/analysis.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "placement/target_shares.h"

namespace strata::placement {

Utilization measure_utilization(const Topology &topo, const Rule &rule, uint32_t num_rep,
                                uint64_t n_inputs, const MappingSource &source) {
  Utilization u;
  u.inputs = n_inputs;
  RuleShape shape(rule);
  std::map<int32_t, uint64_t> counts;
  std::vector<int32_t> result;
  std::vector<int32_t> domains;
  for (uint64_t i = 0; i < n_inputs; ++i) {
    source(i, result);
    if (result.size() < num_rep) ++u.short_results;
    u.replicas += result.size();
    domains.clear();
    bool violated = false;
    for (int32_t d : result) {
      ++counts[d];
      const RuleBlock *block = shape.block_of(topo, d);
      int32_t dom = block ? topo.ancestor_of_type(d, block->domain_type) : d;
      if (std::find(domains.begin(), domains.end(), dom) != domains.end()) violated = true;
      domains.push_back(dom);
    }
    if (violated) ++u.domain_violations;
  }

  std::map<int32_t, double> expected = expected_replicas_per_input(topo, rule, num_rep);
  std::set<int32_t> ids;
  for (const auto &[id, e] : expected) ids.insert(id);
  for (const auto &[id, c] : counts) ids.insert(id);
  double sum_sq = 0, sum_expected = 0;
  for (int32_t id : ids) {
    DeviceUse d;
    d.id = id;
    d.count = counts.count(id) ? counts[id] : 0;
    d.expected = expected.count(id) ? expected[id] * double(n_inputs) : 0;
    u.devices.push_back(d);
    if (d.expected > 0) {
      u.max_deviation = std::max(u.max_deviation, d.deviation());
      u.min_deviation = std::min(u.min_deviation, d.deviation());
    }
    double diff = double(d.count) - d.expected;
    sum_sq += diff * diff;
    sum_expected += d.expected;
  }
  if (!u.devices.empty() && sum_expected > 0) {
    double mean_expected = sum_expected / double(u.devices.size());
    u.stddev = std::sqrt(sum_sq / double(u.devices.size())) / mean_expected;
  }
  return u;
}

Movement measure_movement(uint64_t n_inputs, const MappingSource &old_source,
                          const MappingSource &new_source) {
  Movement m;
  m.inputs = n_inputs;
  std::vector<int32_t> a, b;
  for (uint64_t i = 0; i < n_inputs; ++i) {
    old_source(i, a);
    new_source(i, b);
    if (a != b) ++m.inputs_changed;
    m.replicas += a.size();
    for (int32_t d : b)
      if (std::find(a.begin(), a.end(), d) == a.end()) ++m.replicas_moved;
  }
  return m;
}

double optimal_movement(const std::map<int32_t, double> &old_expected,
                        const std::map<int32_t, double> &new_expected) {
  double old_total = 0, new_total = 0;
  for (const auto &[id, e] : old_expected) old_total += e;
  for (const auto &[id, e] : new_expected) new_total += e;
  if (old_total <= 0 || new_total <= 0) return 0;
  double gain = 0;
  for (const auto &[id, e] : new_expected) {
    auto it = old_expected.find(id);
    double before = it == old_expected.end() ? 0 : it->second / old_total;
    gain += std::max(0.0, e / new_total - before);
  }
  return gain;
}

}  // namespace strata::placement
