// The placement map as the host keeps it: the hierarchy of buckets down to
// devices, the rules, the tunables and the exception table. It is the one
// model behind the text form people edit, the binary form carried in the
// cluster map, and the C structures handed to placement plugins.
//
// Conventions (the same as strata/placement.h): devices have ids >= 0,
// buckets ids < 0; type 0 is the device type; weights and reweights are
// 16.16 fixed point. Bucket weights are not stored: a bucket weighs the sum
// of its subtree, so they can never disagree with the devices.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "strata/placement.h"

namespace strata::placement {

using Weight = uint32_t;  // 16.16 fixed point
constexpr Weight kWeightOne = STRATA_PLACEMENT_WEIGHT_ONE;

struct TypeDef {
  uint32_t id = 0;
  std::string name;
  bool operator==(const TypeDef &) const = default;
};

struct Device {
  int32_t id = 0;
  std::string name;
  Weight weight = kWeightOne;
  std::string device_class;  // empty: no class
  Weight reweight = kWeightOne;
  bool out = false;  // out keeps the reweight for when it comes back in
  bool operator==(const Device &) const = default;
  // What placement sees: 0 when out.
  Weight effective_reweight() const { return out ? 0 : reweight; }
};

struct Bucket {
  int32_t id = 0;
  std::string name;
  uint32_t type = 0;
  std::vector<int32_t> items;  // children in order: devices or buckets
  bool operator==(const Bucket &) const = default;
};

enum class StepOp : uint32_t {
  kTake = STRATA_PLACEMENT_STEP_TAKE,
  kChoose = STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN,
  kChooseleaf = STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN,
  kEmit = STRATA_PLACEMENT_STEP_EMIT,
};

struct Step {
  StepOp op = StepOp::kEmit;
  int32_t bucket = 0;        // take
  std::string device_class;  // take; empty: every device
  int32_t count = 0;         // choose: > 0 exactly, <= 0 num_rep + count
  uint32_t type = 0;         // choose: the type chosen
  bool operator==(const Step &) const = default;
};

struct Rule {
  uint32_t id = 0;
  std::string name;
  std::vector<Step> steps;
  bool operator==(const Rule &) const = default;
};

// A placement group: pool id and the PG's number (its "seed") in the pool.
struct PgId {
  uint32_t pool = 0;
  uint32_t seed = 0;
  auto operator<=>(const PgId &) const = default;
};

// One exception entry: in this PG, device `from` is replaced by `to`.
struct Remap {
  int32_t from = 0;
  int32_t to = 0;
  bool operator==(const Remap &) const = default;
};

using ExceptionTable = std::map<PgId, std::vector<Remap>>;

struct Tunables {
  uint32_t choose_total_tries = 50;
  bool operator==(const Tunables &) const = default;
};

struct PlacementMap {
  Tunables tunables;
  std::vector<TypeDef> types;
  std::vector<Device> devices;
  std::vector<Bucket> buckets;
  std::vector<Rule> rules;
  ExceptionTable exceptions;

  bool operator==(const PlacementMap &) const = default;

  // Lookups by id or name; nullptr when absent. Linear: maps are small and
  // hot paths use Topology instead.
  const Device *device(int32_t id) const;
  const Bucket *bucket(int32_t id) const;
  const Rule *rule(uint32_t id) const;
  const Rule *rule_by_name(const std::string &name) const;
  const TypeDef *type(uint32_t id) const;
  const TypeDef *type_by_name(const std::string &name) const;
  // The id of the device or bucket called `name`; false if none.
  bool item_by_name(const std::string &name, int32_t *id) const;
  // "osd.3" / "host2", or "#-7" for an id the map does not know.
  std::string item_name(int32_t id) const;
  std::string type_name(uint32_t id) const;
  // Device classes in order of first use; index = position.
  std::vector<std::string> device_classes() const;
};

// "1.2f": pool in decimal, seed in hex (as operators know PG ids).
std::string format_pg(PgId pg);
bool parse_pg(const std::string &s, PgId *pg);

}  // namespace strata::placement
