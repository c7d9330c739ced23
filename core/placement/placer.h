// A placement plugin instantiated for one map: the host's handle on the
// plugin's map() function.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "host/plugin_loader.h"
#include "placement/placement_map.h"
#include "strata/placement.h"

namespace strata::placement {

class Placer {
 public:
  // Builds the plugin's state for `map`. Fails when the map is invalid
  // (validate_map), `plugin` is not a placement plugin, or the plugin
  // refuses the map; the message names the plugin file.
  static Result<Placer> create(const host::Plugin &plugin, const PlacementMap &map);

  // Maps input x; see strata_placement_ops.map. Thread-safe.
  int map(uint32_t rule, uint32_t x, uint32_t num_rep, int32_t *out, uint32_t cap) const {
    return ops_->map(handle_.get(), rule, x, num_rep, out, cap);
  }
  // Convenience for callers off the hot path; negative errno as an error.
  Result<std::vector<int32_t>> map(uint32_t rule, uint32_t x, uint32_t num_rep) const;

  const host::Plugin &plugin() const { return plugin_; }
  // The slot's signature depends on the plugin's minor (placement.h).
  uint64_t capabilities() const {
    return plugin_.abi_minor() >= 3 ? ops_->capabilities(handle_.get()) : ops_->capabilities_1_2();
  }

 private:
  host::Plugin plugin_;
  const strata_placement_ops *ops_ = nullptr;
  // The deleter holds a copy of the plugin so the library outlives the
  // handle.
  std::shared_ptr<strata_placement> handle_;
};

// The placement plugin called `name` on `search_path` (default: the host's
// plugin path).
Result<host::Plugin> find_placement_plugin(const std::string &name,
                                           std::vector<std::string> search_path = {});

}  // namespace strata::placement
