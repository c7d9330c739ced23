#include "placement_checks.h"

#include <algorithm>
#include <set>

namespace strata::conformance {

Placements map_inputs(const FreshPlacement &p, uint32_t rule, uint32_t num_rep, uint32_t n) {
  Placements out;
  out.reserve(n);
  for (uint32_t x = 0; x < n; ++x) out.push_back(p.map(rule, x, num_rep));
  return out;
}

std::string describe(const std::vector<int32_t> &devices) {
  std::string s = "[";
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? ", " : "") + std::to_string(devices[i]);
  return s + "]";
}

std::string result_problem(const sdk::PlacementMap &map, uint32_t x,
                           const std::vector<int32_t> &result, uint32_t domain_type) {
  std::string where = "input " + std::to_string(x) + " -> " + describe(result) + ": ";
  std::set<int32_t> devices, domains;
  for (int32_t id : result) {
    auto d = std::find_if(map.devices.begin(), map.devices.end(),
                          [&](const sdk::PlacementDevice &dev) { return dev.id == id; });
    if (d == map.devices.end()) return where + std::to_string(id) + " is not a device of the map";
    if (d->weight == 0) return where + "device " + std::to_string(id) + " has weight 0";
    if (d->reweight == 0) return where + "device " + std::to_string(id) + " is out (reweight 0)";
    if (!devices.insert(id).second) return where + "device " + std::to_string(id) + " twice";
    if (domain_type != kTypeDevice) {
      int32_t domain = ancestor_of(map, id, domain_type);
      if (!domains.insert(domain).second)
        return where + "two devices under bucket " + std::to_string(domain) + " (type " +
               std::to_string(domain_type) + ")";
    }
  }
  return "";
}

std::string first_problem(const sdk::PlacementMap &map, const Placements &results,
                          uint32_t domain_type) {
  for (size_t x = 0; x < results.size(); ++x)
    if (std::string p = result_problem(map, static_cast<uint32_t>(x), results[x], domain_type);
        !p.empty())
      return p;
  return "";
}

double moved_share(const Placements &before, const Placements &after) {
  uint64_t total = 0, moved = 0;
  for (size_t x = 0; x < before.size() && x < after.size(); ++x) {
    for (int32_t id : before[x]) {
      ++total;
      if (std::find(after[x].begin(), after[x].end(), id) == after[x].end()) ++moved;
    }
  }
  return total ? static_cast<double>(moved) / static_cast<double>(total) : 0.0;
}

std::vector<uint64_t> device_counts(const Placements &results, size_t n_devices) {
  std::vector<uint64_t> counts(n_devices, 0);
  for (const std::vector<int32_t> &r : results)
    for (int32_t id : r)
      if (id >= 0 && static_cast<size_t>(id) < n_devices) ++counts[static_cast<size_t>(id)];
  return counts;
}

}  // namespace strata::conformance
