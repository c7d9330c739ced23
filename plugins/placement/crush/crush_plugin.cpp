// crush: CRUSH-style placement over a straw2 hierarchy.
//
// Each bucket picks a child by straw2 (every child draws ln(u) / weight, the
// longest straw wins), the descent repeats level by level down to the
// failure-domain type, and a chooseleaf step then draws one device inside
// each chosen domain. Collisions and out/reweighted devices are retried
// (bounded by the map's choose_total_tries). Class-restricted rules walk a
// shadow tree whose weights count only devices of that class.
#include <memory>
#include <vector>

#include "firstn_chooser.h"
#include "plugin_topology.h"
#include "rule_runner.h"
#include "straw2_tree.h"
#include "strata/cpp/placement.hpp"

namespace strata::placement_plugin {
namespace {

class CrushPlacement : public sdk::Placement {
 public:
  static std::unique_ptr<CrushPlacement> create(const sdk::PlacementMap &map,
                                                const sdk::Logger &) {
    return std::unique_ptr<CrushPlacement>(new CrushPlacement(map));
  }

  int map(uint32_t rule_id, uint32_t x, uint32_t num_rep, int32_t *out,
          uint32_t cap) const override {
    const sdk::PlacementRule *rule = topo_.rule(rule_id);
    if (!rule) return -ENOENT;
    if (num_rep > STRATA_PLACEMENT_MAX_RESULT) return -EINVAL;
    auto select = [&](const ChooseRequest &req, int32_t from, uint32_t in, int32_t *items,
                      int32_t *leaves, int n_before) {
      int node = topo_.bucket_index(from);
      if (node < 0) return n_before;
      FirstnChooser chooser(trees_[size_t(req.cls + 1)], topo_.map().choose_total_tries);
      return chooser.choose(node, in, req.count, req.type, req.leaf, items, leaves, n_before);
    };
    return run_rule(*rule, x, num_rep, out, cap, select);
  }

 private:
  explicit CrushPlacement(const sdk::PlacementMap &map) : topo_(map) {
    trees_.reserve(topo_.n_classes() + 1);
    for (int cls = kAllClasses; cls < int(topo_.n_classes()); ++cls) trees_.emplace_back(topo_, cls);
  }

  PluginTopology topo_;
  std::vector<Straw2Tree> trees_;  // [class + 1]
};

}  // namespace
}  // namespace strata::placement_plugin

STRATA_PLACEMENT_PLUGIN(strata::placement_plugin::CrushPlacement, "crush", "0.1.0",
                        "CRUSH-style straw2 hierarchy with failure domains",
                        STRATA_PLACEMENT_CAP_DEVICE_CLASSES | STRATA_PLACEMENT_CAP_REWEIGHT |
                            STRATA_PLACEMENT_CAP_CHAINED_CHOOSE |
                            STRATA_PLACEMENT_CAP_MULTI_TAKE)
