// FreshPlacement: an instance of the placement plugin under test.
#include <cstring>
#include <type_traits>

#include "kit.h"

namespace strata::conformance {

namespace {
// ABI 1.1 declared capabilities(void); ABI 1.3 passes the handle as the
// other kinds do. Call whichever this SDK declares.
template <class Fn>
uint64_t call_capabilities(Fn fn, const strata_placement *p) {
  if constexpr (std::is_invocable_v<Fn, const strata_placement *>)
    return fn(p);
  else
    return fn();
}
}  // namespace

uint64_t placement_caps(const strata_placement *p) {
  return call_capabilities(placement_ops().capabilities, p);
}

CreateResult create_placement_rc(const strata_placement_map *map,
                                 const strata_host_services *host) {
  strata_err err{};
  strata_placement *p = nullptr;
  int rc = placement_ops().create(map, host, &p, &err);
  return {rc, p, std::string(err.msg, strnlen(err.msg, sizeof err.msg))};
}

FreshPlacement::FreshPlacement(const sdk::PlacementMap &map) {
  CPlacementMap c(map);
  create(c.get());
}

FreshPlacement::FreshPlacement(CPlacementMap &map) { create(map.get()); }

void FreshPlacement::create(const strata_placement_map *map) {
  strata_err err{};
  int rc = placement_ops().create(map, host_services(), &p_, &err);
  if (rc != 0) {
    if (p_) placement_ops().destroy(p_);
    p_ = nullptr;
    throw CallFailed("create(placement map)", rc, err);
  }
  if (!p_) throw std::runtime_error("create(placement map) returned 0 but no handle");
}

FreshPlacement::~FreshPlacement() { placement_ops().destroy(p_); }

int FreshPlacement::map_rc(uint32_t rule, uint32_t x, uint32_t num_rep, int32_t *out,
                           uint32_t cap) const {
  return placement_ops().map(p_, rule, x, num_rep, out, cap);
}

std::vector<int32_t> FreshPlacement::map(uint32_t rule, uint32_t x, uint32_t num_rep) const {
  std::vector<int32_t> out(STRATA_PLACEMENT_MAX_RESULT);
  int n = map_rc(rule, x, num_rep, out.data(), static_cast<uint32_t>(out.size()));
  if (n < 0) {
    strata_err none{};
    throw CallFailed("map(rule " + std::to_string(rule) + ", x " + std::to_string(x) +
                         ", num_rep " + std::to_string(num_rep) + ")",
                     n, none);
  }
  if (static_cast<size_t>(n) > out.size())
    throw std::runtime_error("map() claims " + std::to_string(n) + " devices in a buffer of " +
                             std::to_string(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace strata::conformance
