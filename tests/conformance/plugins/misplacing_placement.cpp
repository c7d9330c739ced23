// A placement plugin that loads fine and breaks map()'s contract: it takes
// devices round-robin whatever their weight, reweight or failure domain,
// repeats them when it runs out, and answers 0 for an unknown rule. The
// kit's placement suite must fail it, printing the values it compared.
#include <vector>

#include "strata/cpp/placement.hpp"

namespace {

class MisplacingPlacement : public strata::sdk::Placement {
 public:
  static std::unique_ptr<MisplacingPlacement> create(const strata::sdk::PlacementMap &map,
                                                     const strata::sdk::Logger &) {
    auto p = std::make_unique<MisplacingPlacement>();
    for (const strata::sdk::PlacementDevice &d : map.devices) p->devices_.push_back(d.id);
    return p;
  }
  int map(uint32_t, uint32_t x, uint32_t num_rep, int32_t *out, uint32_t cap) const override {
    if (devices_.empty()) return 0;
    uint32_t n = num_rep < cap ? num_rep : cap;
    for (uint32_t i = 0; i < n; ++i) out[i] = devices_[(x + i / 2) % devices_.size()];
    return static_cast<int>(n);
  }

 private:
  std::vector<int32_t> devices_;
};

}  // namespace

STRATA_PLACEMENT_PLUGIN(MisplacingPlacement, "misplacing", "0.0.1",
                        "breaks the placement contract for the conformance kit's own tests", 0)
