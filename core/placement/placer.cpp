#include "placement/placer.h"

#include "placement/c_map.h"
#include "placement/map_validation.h"
#include "placement/topology.h"

namespace strata::placement {

Result<Placer> Placer::create(const host::Plugin &plugin, const PlacementMap &map) {
  if (plugin.kind() != STRATA_KIND_PLACEMENT)
    return Status::Error(EINVAL, "plugin " + plugin.path() + " is a " +
                                     host::kind_name(plugin.kind()) +
                                     " plugin, not a placement plugin");
  if (Status s = validate_map(map); !s.ok()) return s.Context("placement map");
  const auto *ops = plugin.ops<strata_placement_ops>();
  Topology topo(map);
  CMap cmap(topo);
  strata_err err{};
  strata_placement *raw = nullptr;
  int rc = ops->create(cmap.get(), nullptr, &raw, &err);
  if (rc < 0 || !raw)
    return Status::Error(rc < 0 ? rc : -EIO, "placement plugin " + plugin.name() + " (" +
                                                 plugin.path() + ") refused the map: " + err.msg);
  Placer p;
  p.plugin_ = plugin;
  p.ops_ = ops;
  host::Plugin keep = plugin;
  p.handle_ = std::shared_ptr<strata_placement>(
      raw, [ops, keep](strata_placement *h) { ops->destroy(h); });
  return p;
}

Result<std::vector<int32_t>> Placer::map(uint32_t rule, uint32_t x, uint32_t num_rep) const {
  std::vector<int32_t> out(STRATA_PLACEMENT_MAX_RESULT);
  int n = map(rule, x, num_rep, out.data(), uint32_t(out.size()));
  if (n < 0)
    return Status::Error(n, "placement plugin " + plugin_.name() + ": mapping x=" +
                                std::to_string(x) + " with rule " + std::to_string(rule) +
                                " failed");
  out.resize(size_t(n));
  return out;
}

Result<host::Plugin> find_placement_plugin(const std::string &name,
                                           std::vector<std::string> search_path) {
  if (search_path.empty()) search_path = host::default_plugin_path();
  host::PluginRegistry registry(std::move(search_path));
  registry.scan();
  return registry.find(STRATA_KIND_PLACEMENT, name);
}

}  // namespace strata::placement
