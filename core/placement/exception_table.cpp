#include "placement/exception_table.h"

namespace strata::placement {

bool substitution_allowed(const Topology &topo, const RuleShape &shape, const int32_t *result,
                          int n, int pos, int32_t to) {
  for (int j = 0; j < n; ++j)
    if (result[j] == to) return false;
  int32_t from = result[pos];
  const RuleBlock *block = shape.block_of(topo, from);
  if (!block || !device_eligible(topo, *block, to)) return false;
  for (uint32_t t : block->outer_types)
    if (topo.ancestor_of_type(to, t) != topo.ancestor_of_type(from, t)) return false;
  int32_t domain = topo.ancestor_of_type(to, block->domain_type);
  if (domain == kNoItem) return false;
  for (int j = 0; j < n; ++j)
    if (j != pos && topo.ancestor_of_type(result[j], block->domain_type) == domain) return false;
  return true;
}

int apply_exceptions(const Topology &topo, const RuleShape &shape,
                     const std::vector<Remap> &remaps, int32_t *result, int n) {
  int applied = 0;
  for (const Remap &m : remaps) {
    for (int pos = 0; pos < n; ++pos) {
      if (result[pos] != m.from) continue;
      if (substitution_allowed(topo, shape, result, n, pos, m.to)) {
        result[pos] = m.to;
        ++applied;
      }
      break;
    }
  }
  return applied;
}

}  // namespace strata::placement
