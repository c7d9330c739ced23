#include <algorithm>

#include "cluster/cluster_map.h"
#include "placement/exception_table.h"
#include "placement/pg.h"
#include "placement/rule_shape.h"

namespace strata::cluster {

Result<std::shared_ptr<const MapView>> MapView::create(ClusterMap map,
                                                       const host::Plugin &placement_plugin) {
  // Not make_shared: the constructor is private. The view never moves after
  // this, so topo_ may point into map_.
  std::shared_ptr<MapView> v(new MapView());
  v->map_ = std::move(map);
  if (!v->map_.placement.rules.empty()) {
    auto placer = placement::Placer::create(placement_plugin, v->map_.placement);
    if (!placer.ok()) return placer.status().Context("map epoch " + std::to_string(v->map_.epoch));
    v->placer_ = std::make_shared<placement::Placer>(std::move(*placer));
  }
  if (!v->map_.placement.exceptions.empty())
    v->topo_ = std::make_shared<placement::Topology>(v->map_.placement);
  return std::shared_ptr<const MapView>(std::move(v));
}

PgId MapView::pg_of(uint32_t pool, std::string_view oid) const {
  const PoolInfo *p = map_.pool(pool);
  return PgId{pool, p && p->pg_num ? placement::object_to_pg(oid, p->pg_num) : 0};
}

std::vector<int32_t> MapView::raw_set(PgId pg) const {
  const PoolInfo *p = map_.pool(pg.pool);
  if (!placer_ || !p || pg.seed >= p->pg_num) return {};
  const placement::Rule *rule = map_.placement.rule(p->rule);
  if (!rule) return {};
  int32_t buf[STRATA_PLACEMENT_MAX_RESULT];
  uint32_t want = std::min<uint32_t>(p->size, STRATA_PLACEMENT_MAX_RESULT);
  int n = placer_->map(p->rule, placement::pg_input(pg), want, buf, STRATA_PLACEMENT_MAX_RESULT);
  if (n <= 0) return {};
  if (topo_) {
    auto it = map_.placement.exceptions.find(pg);
    if (it != map_.placement.exceptions.end())
      placement::apply_exceptions(*topo_, placement::RuleShape(*rule), it->second, buf, n);
  }
  return std::vector<int32_t>(buf, buf + n);
}

std::vector<int32_t> MapView::acting(PgId pg) const {
  std::vector<int32_t> out = raw_set(pg);
  std::erase_if(out, [&](int32_t id) {
    const OsdInfo *o = map_.osd(id);
    return !o || !o->up;
  });
  return out;
}

int32_t MapView::primary(PgId pg) const {
  std::vector<int32_t> a = acting(pg);
  return a.empty() ? -1 : a[0];
}

}  // namespace strata::cluster
