// Building placement maps for the placement suite: the C view the host
// hands to create(), and a small rack/host/device cluster to start from.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kit.h"

namespace strata::conformance {

namespace {
constexpr uint32_t kOne = STRATA_PLACEMENT_WEIGHT_ONE;
}  // namespace

sdk::PlacementMap test_cluster(int racks, int hosts_per_rack, int devices_per_host) {
  sdk::PlacementMap m;
  m.types = {
      {kTypeDevice, "device"}, {kTypeHost, "host"}, {kTypeRack, "rack"}, {kTypeRoot, "root"}};
  sdk::PlacementBucket root;
  root.id = kRootBucket;
  root.type = kTypeRoot;
  int32_t next_bucket = kRootBucket - 1;
  int32_t next_device = 0;
  std::vector<sdk::PlacementBucket> hosts;
  for (int r = 0; r < racks; ++r) {
    sdk::PlacementBucket rack;
    rack.id = next_bucket--;
    rack.type = kTypeRack;
    for (int h = 0; h < hosts_per_rack; ++h) {
      sdk::PlacementBucket host;
      host.id = next_bucket--;
      host.type = kTypeHost;
      for (int d = 0; d < devices_per_host; ++d) {
        m.devices.push_back({next_device, -1, kOne, kOne});
        host.items.push_back(next_device++);
      }
      rack.items.push_back(host.id);
      hosts.push_back(std::move(host));
    }
    root.items.push_back(rack.id);
    m.buckets.push_back(std::move(rack));
  }
  m.buckets.insert(m.buckets.begin(), std::move(root));
  for (sdk::PlacementBucket &h : hosts) m.buckets.push_back(std::move(h));
  auto rule = [&](uint32_t id, const char *name, uint32_t choose_op, uint32_t type) {
    m.rules.push_back({id,
                       name,
                       {{STRATA_PLACEMENT_STEP_TAKE, kRootBucket, -1},
                        {choose_op, 0, static_cast<int32_t>(type)},
                        {STRATA_PLACEMENT_STEP_EMIT, 0, 0}}});
  };
  rule(kRuleHosts, "hosts", STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, kTypeHost);
  rule(kRuleRacks, "racks", STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN, kTypeRack);
  rule(kRuleDevices, "devices", STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN, kTypeDevice);
  return with_weights_summed(std::move(m));
}

sdk::PlacementMap with_weights_summed(sdk::PlacementMap map) {
  // Children before parents: a bucket's weight is final once every bucket
  // below it is; the maps here are shallow, so repeat until nothing changes.
  auto weight_of = [&](int32_t item) -> uint64_t {
    if (item >= 0) {
      for (const sdk::PlacementDevice &d : map.devices)
        if (d.id == item) return d.weight;
      return 0;
    }
    for (const sdk::PlacementBucket &b : map.buckets)
      if (b.id == item) {
        uint64_t sum = 0;
        for (uint32_t w : b.item_weights) sum += w;
        return sum;
      }
    return 0;
  };
  for (size_t pass = 0; pass <= map.buckets.size(); ++pass) {
    bool changed = false;
    for (sdk::PlacementBucket &b : map.buckets) {
      std::vector<uint32_t> weights;
      for (int32_t item : b.items) weights.push_back(static_cast<uint32_t>(weight_of(item)));
      if (weights != b.item_weights) {
        b.item_weights = std::move(weights);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return map;
}

int32_t parent_of(const sdk::PlacementMap &map, int32_t item) {
  for (const sdk::PlacementBucket &b : map.buckets)
    for (int32_t child : b.items)
      if (child == item) return b.id;
  return 0;
}

int32_t ancestor_of(const sdk::PlacementMap &map, int32_t item, uint32_t type) {
  if (type == kTypeDevice) return item;
  for (int32_t at = parent_of(map, item); at != 0; at = parent_of(map, at))
    for (const sdk::PlacementBucket &b : map.buckets)
      if (b.id == at && b.type == type) return at;
  return 0;
}

CPlacementMap::CPlacementMap(const sdk::PlacementMap &m, uint32_t extra_element_bytes)
    : extra_(extra_element_bytes) {
  map_.struct_size = sizeof map_;
  auto keep = [&](const std::string &s) { return strings_.emplace_back(s).c_str(); };

  std::vector<strata_placement_type> types;
  for (const sdk::PlacementType &t : m.types) types.push_back({t.id, 0, keep(t.name)});
  map_.types = pack(types, &map_.type_size);
  map_.n_types = static_cast<uint32_t>(types.size());

  for (const std::string &c : m.class_names) class_names_.push_back(keep(c));
  map_.class_names = class_names_.data();
  map_.n_class_names = static_cast<uint32_t>(class_names_.size());

  std::vector<strata_placement_device> devices;
  for (const sdk::PlacementDevice &d : m.devices)
    devices.push_back({d.id, d.class_index, d.weight, d.reweight});
  map_.devices = pack(devices, &map_.device_size);
  map_.n_devices = static_cast<uint32_t>(devices.size());

  std::vector<strata_placement_bucket> buckets;
  for (const sdk::PlacementBucket &b : m.buckets) {
    auto &items = arrays_.emplace_back(b.items.size() * sizeof(int32_t));
    if (!b.items.empty()) std::memcpy(items.data(), b.items.data(), items.size());
    auto &weights = arrays_.emplace_back(b.item_weights.size() * sizeof(uint32_t));
    if (!b.item_weights.empty()) std::memcpy(weights.data(), b.item_weights.data(), weights.size());
    buckets.push_back({b.id, b.type, b.alg, static_cast<uint32_t>(b.items.size()),
                       reinterpret_cast<const int32_t *>(items.data()),
                       reinterpret_cast<const uint32_t *>(weights.data())});
  }
  map_.buckets = pack(buckets, &map_.bucket_size);
  map_.n_buckets = static_cast<uint32_t>(buckets.size());

  std::vector<strata_placement_rule> rules;
  for (const sdk::PlacementRule &r : m.rules) {
    std::vector<strata_placement_step> steps;
    for (const sdk::PlacementStep &s : r.steps) steps.push_back({s.op, s.arg1, s.arg2, 0});
    rules.push_back(
        {r.id, static_cast<uint32_t>(steps.size()), pack(steps, &map_.step_size), keep(r.name)});
  }
  if (map_.step_size == 0) map_.step_size = sizeof(strata_placement_step) + extra_;
  map_.rules = pack(rules, &map_.rule_size);
  map_.n_rules = static_cast<uint32_t>(rules.size());
  map_.choose_total_tries = m.choose_total_tries;
}

template <class T>
const T *CPlacementMap::pack(const std::vector<T> &items, uint32_t *element_size) {
  *element_size = static_cast<uint32_t>(sizeof(T) + extra_);
  // Padding bytes a later minor's fields would occupy: never zero, so that
  // a plugin reading past the layout it knows sees nonsense.
  auto &bytes = arrays_.emplace_back(std::max<size_t>(1, items.size() * *element_size),
                                     static_cast<char>(0xA5));
  for (size_t i = 0; i < items.size(); ++i)
    std::memcpy(bytes.data() + i * *element_size, &items[i], sizeof(T));
  return reinterpret_cast<const T *>(bytes.data());
}

void CPlacementMap::scribble() {
  for (std::vector<char> &a : arrays_) std::memset(a.data(), 0x5A, a.size());
  for (std::string &s : strings_) std::fill(s.begin(), s.end(), '?');
}

}  // namespace strata::conformance
