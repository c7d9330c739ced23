#include "cluster/placement_gen.h"

#include <set>

#include "placement/map_validation.h"

namespace strata::cluster {

namespace {

using placement::Bucket;
using placement::Device;
using placement::PlacementMap;
using placement::Rule;
using placement::Step;
using placement::StepOp;

constexpr uint32_t kTypeDevice = 0, kTypeHost = 1, kTypeRoot = 2;
constexpr int32_t kRootId = -1;

const std::string &host_of(const OsdInfo &o) {
  static const std::string fallback = kDefaultHost;
  return o.host.empty() ? fallback : o.host;
}

Rule make_rule(uint32_t id, const char *name, StepOp op, uint32_t type) {
  Rule r;
  r.id = id;
  r.name = name;
  Step take;
  take.op = StepOp::kTake;
  take.bucket = kRootId;
  Step choose;
  choose.op = op;
  choose.count = 0;  // as many as the pool's size
  choose.type = type;
  Step emit;
  emit.op = StepOp::kEmit;
  r.steps = {take, choose, emit};
  return r;
}

}  // namespace

Result<PlacementMap> generate_placement(const std::map<int32_t, OsdInfo> &osds,
                                        const PlacementMap &previous) {
  PlacementMap m;
  m.tunables = previous.tunables;
  m.types = {{kTypeDevice, "device"}, {kTypeHost, "host"}, {kTypeRoot, "root"}};

  // Hosts in name order, each with its devices in id order (std::map keys).
  std::map<std::string, std::vector<int32_t>> hosts;
  uint64_t total_weight = 0;
  for (const auto &[id, o] : osds) {
    Device d;
    d.id = id;
    d.name = "osd." + std::to_string(id);
    d.weight = o.weight;
    d.out = !o.in;
    m.devices.push_back(d);
    hosts[host_of(o)].push_back(id);
    total_weight += o.weight;
  }

  int32_t next_id = kRootId - 1;
  for (const Bucket &b : previous.buckets) next_id = std::min(next_id, b.id - 1);
  Bucket root;
  root.id = kRootId;
  root.name = "default";
  root.type = kTypeRoot;
  m.buckets.push_back(root);
  for (const auto &[name, devices] : hosts) {
    Bucket b;
    b.name = name;
    b.type = kTypeHost;
    b.items = devices;
    b.id = next_id;
    bool kept = false;
    for (const Bucket &old : previous.buckets)
      if (old.name == name && old.type == kTypeHost && old.id != kRootId) {
        b.id = old.id;
        kept = true;
      }
    if (!kept) --next_id;
    m.buckets[0].items.push_back(b.id);
    m.buckets.push_back(std::move(b));
  }

  if (total_weight > 0) {
    m.rules.push_back(make_rule(kRuleHost, "replicated_host", StepOp::kChooseleaf, kTypeHost));
    m.rules.push_back(make_rule(kRuleOsd, "replicated_osd", StepOp::kChoose, kTypeDevice));
  }
  for (const auto &[pg, remaps] : previous.exceptions) {
    std::vector<placement::Remap> keep;
    for (const auto &r : remaps)
      if (osds.count(r.from) && osds.count(r.to)) keep.push_back(r);
    if (!keep.empty()) m.exceptions[pg] = std::move(keep);
  }
  if (Status s = placement::validate_map(m); !s.ok())
    return s.Context("generating the placement map from " + std::to_string(osds.size()) + " OSDs");
  return m;
}

uint32_t count_hosts(const ClusterMap &m) {
  std::set<std::string> hosts;
  for (const auto &[id, o] : m.osds)
    if (o.in && o.weight > 0) hosts.insert(host_of(o));
  return uint32_t(hosts.size());
}

uint32_t default_rule(const ClusterMap &m, uint32_t size) {
  return count_hosts(m) >= size ? kRuleHost : kRuleOsd;
}

}  // namespace strata::cluster
