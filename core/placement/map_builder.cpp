#include "placement/map_builder.h"

#include <cstdlib>
#include <functional>

#include "placement/map_validation.h"

namespace strata::placement {

Result<std::vector<std::pair<std::string, uint32_t>>> parse_layout(const std::string &text) {
  std::vector<std::pair<std::string, uint32_t>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string part = text.substr(start, comma - start);
    size_t colon = part.find(':');
    char *end = nullptr;
    unsigned long n = colon == std::string::npos ? 0 : std::strtoul(part.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || colon == 0 || !end || *end || n == 0 || n > 100000)
      return Status::Error(EINVAL, "bad layout part '" + part +
                                       "' (expected type:count, e.g. rack:2,host:5,device:4)");
    out.emplace_back(part.substr(0, colon), uint32_t(n));
    start = comma + 1;
  }
  if (out.empty() || out.back().first != "device")
    return Status::Error(EINVAL, "layout must end with device:<count>");
  return out;
}

Result<PlacementMap> build_map(const BuildSpec &spec) {
  if (spec.levels.empty() || spec.levels.back().first != "device")
    return Status::Error(EINVAL, "layout must end with device:<count>");
  if (spec.weights.empty()) return Status::Error(EINVAL, "no device weights");
  PlacementMap m;
  m.types.push_back({0, "device"});
  size_t n_levels = spec.levels.size();
  for (size_t i = n_levels - 1; i-- > 0;)
    m.types.push_back({uint32_t(n_levels - 1 - i), spec.levels[i].first});
  uint32_t root_type = uint32_t(n_levels);
  m.types.push_back({root_type, "root"});

  int32_t next_bucket = -1, next_device = 0;
  std::vector<uint32_t> per_type_index(n_levels, 0);
  // Creates the bucket for level `level` (n_levels - 1 is the root's
  // children's parent, i.e. the root itself when level == -1).
  std::function<int32_t(int, const std::string &)> make = [&](int level, const std::string &name) {
    Bucket b;
    b.id = next_bucket--;
    b.name = name;
    b.type = level < 0 ? root_type : uint32_t(n_levels - 1 - size_t(level));
    size_t index = m.buckets.size();
    m.buckets.push_back(b);
    size_t child_level = size_t(level + 1);
    for (uint32_t k = 0; k < spec.levels[child_level].second; ++k) {
      int32_t child;
      if (child_level == n_levels - 1) {
        Device d;
        d.id = next_device++;
        d.name = spec.device_prefix + std::to_string(d.id);
        d.weight = spec.weights[size_t(d.id) % spec.weights.size()];
        d.device_class = spec.device_class;
        m.devices.push_back(d);
        child = d.id;
      } else {
        const std::string &type = spec.levels[child_level].first;
        child = make(int(child_level), type + std::to_string(per_type_index[child_level]++));
      }
      m.buckets[index].items.push_back(child);
    }
    return b.id;
  };
  int32_t root = make(-1, "default");

  std::string domain = spec.failure_domain.empty()
                           ? (n_levels >= 2 ? spec.levels[n_levels - 2].first : "device")
                           : spec.failure_domain;
  const TypeDef *t = m.type_by_name(domain);
  if (!t) return Status::Error(EINVAL, "unknown failure domain type '" + domain + "'");
  Rule r;
  r.id = 0;
  r.name = "replicated";
  Step take;
  take.op = StepOp::kTake;
  take.bucket = root;
  take.device_class = spec.device_class;
  Step choose;
  choose.op = t->id == 0 ? StepOp::kChoose : StepOp::kChooseleaf;
  choose.count = 0;
  choose.type = t->id;
  Step emit;
  emit.op = StepOp::kEmit;
  r.steps = {take, choose, emit};
  m.rules.push_back(r);
  if (Status s = validate_map(m); !s.ok()) return s;
  return m;
}

}  // namespace strata::placement
