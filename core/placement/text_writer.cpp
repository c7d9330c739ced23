// The writer for the text form: a canonical layout (tunables, types,
// devices, buckets, rules, exceptions, each in the map's order) so that
// two maps can be compared with diff.
#include <functional>
#include <sstream>
#include <unordered_map>

#include "placement/fixed_point.h"
#include "placement/text_format.h"

namespace strata::placement {

std::string step_text(const PlacementMap &map, const Step &s) {
  switch (s.op) {
    case StepOp::kTake:
      return "take " + map.item_name(s.bucket) +
             (s.device_class.empty() ? "" : " class " + s.device_class);
    case StepOp::kChoose:
    case StepOp::kChooseleaf:
      return std::string(s.op == StepOp::kChoose ? "choose" : "chooseleaf") + " firstn " +
             std::to_string(s.count) + " type " + map.type_name(s.type);
    case StepOp::kEmit:
      return "emit";
  }
  return "?";
}

std::string format_text(const PlacementMap &map) {
  std::ostringstream out;
  out << "# Strata placement map\n";
  out << "tunable choose_total_tries " << map.tunables.choose_total_tries << "\n\n";
  for (const TypeDef &t : map.types) out << "type " << t.id << " " << t.name << "\n";
  out << "\n";
  for (const Device &d : map.devices) {
    out << "device " << d.id << " " << d.name << " weight " << format_fixed(d.weight);
    if (!d.device_class.empty()) out << " class " << d.device_class;
    if (d.reweight != kWeightOne) out << " reweight " << format_fixed(d.reweight);
    if (d.out) out << " out";
    out << "\n";
  }

  std::unordered_map<int32_t, uint64_t> weights;
  std::function<uint64_t(int32_t)> weight = [&](int32_t id) -> uint64_t {
    if (id >= 0) {
      const Device *d = map.device(id);
      return d ? d->weight : 0;
    }
    if (auto it = weights.find(id); it != weights.end()) return it->second;
    uint64_t sum = 0;
    if (const Bucket *b = map.bucket(id))
      for (int32_t child : b->items) sum += weight(child);
    return weights[id] = sum;
  };
  for (const Bucket &b : map.buckets) {
    uint64_t w = weight(b.id);
    out << "\n"
        << map.type_name(b.type) << " " << b.name << " id " << b.id << " {  # weight "
        << (w <= UINT32_MAX ? format_fixed(Weight(w)) : std::string("overflow")) << "\n";
    for (int32_t item : b.items) out << "  " << map.item_name(item) << "\n";
    out << "}\n";
  }
  for (const Rule &r : map.rules) {
    out << "\nrule " << r.name << " id " << r.id << " {\n";
    for (const Step &s : r.steps) out << "  " << step_text(map, s) << "\n";
    out << "}\n";
  }
  if (!map.exceptions.empty()) out << "\n";
  for (const auto &[pg, remaps] : map.exceptions)
    for (const Remap &m : remaps)
      out << "exception " << format_pg(pg) << " " << map.item_name(m.from) << " -> "
          << map.item_name(m.to) << "\n";
  return out.str();
}

}  // namespace strata::placement
