#include "placement/pool_mapping.h"

#include "placement/exception_table.h"
#include "placement/pg.h"
#include "placement/rule_shape.h"

namespace strata::placement {

Result<PoolMapping> map_pool(const Placer &placer, const Topology &topo, const PoolSpec &spec) {
  const Rule *rule = topo.map().rule(spec.rule);
  if (!rule) return Status::Error(ENOENT, "no rule with id " + std::to_string(spec.rule));
  RuleShape shape(*rule);
  PoolMapping out;
  out.raw.resize(spec.pg_num);
  out.effective.resize(spec.pg_num);
  int32_t buf[STRATA_PLACEMENT_MAX_RESULT];
  for (uint32_t seed = 0; seed < spec.pg_num; ++seed) {
    PgId pg{spec.pool, seed};
    int n = placer.map(spec.rule, pg_input(pg), spec.num_rep, buf, STRATA_PLACEMENT_MAX_RESULT);
    if (n < 0) return Status::Error(n, "mapping PG " + format_pg(pg) + " failed");
    out.raw[seed].assign(buf, buf + n);
    auto it = topo.map().exceptions.find(pg);
    if (it != topo.map().exceptions.end()) apply_exceptions(topo, shape, it->second, buf, n);
    out.effective[seed].assign(buf, buf + n);
  }
  return out;
}

}  // namespace strata::placement
