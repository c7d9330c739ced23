// Write a placement plugin as a C++ class and export it with one macro:
//
//   class MyPlacement : public strata::sdk::Placement {
//    public:
//     static std::unique_ptr<MyPlacement> create(const strata::sdk::PlacementMap &map,
//                                                const strata::sdk::Logger &log);
//     int map(uint32_t rule, uint32_t x, uint32_t num_rep, int32_t *out,
//             uint32_t cap) const override;
//   };
//   STRATA_PLACEMENT_PLUGIN(MyPlacement, "mine", "0.1.0", "one line",
//                           STRATA_PLACEMENT_CAP_DEVICE_CLASSES)
//
// The adapter copies the C map (honouring the element sizes the host passed)
// into the plain C++ structs below before create() sees it. create() reports
// failure by throwing strata::sdk::Error; map() returns a count or a negative
// errno and should not throw (it is the hot path). Semantics are those of
// strata/placement.h.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "strata/cpp/plugin_support.hpp"
#include "strata/placement.h"

namespace strata::sdk {

struct PlacementType {
  uint32_t id = 0;
  std::string name;
};

struct PlacementDevice {
  int32_t id = 0;
  int32_t class_index = -1;
  uint32_t weight = 0;
  uint32_t reweight = STRATA_PLACEMENT_WEIGHT_ONE;
};

struct PlacementBucket {
  int32_t id = 0;
  uint32_t type = 0;
  uint32_t alg = STRATA_PLACEMENT_ALG_STRAW2;
  std::vector<int32_t> items;
  std::vector<uint32_t> item_weights;
};

struct PlacementStep {
  uint32_t op = 0;
  int32_t arg1 = 0;
  int32_t arg2 = 0;
};

struct PlacementRule {
  uint32_t id = 0;
  std::string name;
  std::vector<PlacementStep> steps;
};

// An owned copy of a strata_placement_map.
struct PlacementMap {
  std::vector<PlacementType> types;
  std::vector<std::string> class_names;
  std::vector<PlacementDevice> devices;
  std::vector<PlacementBucket> buckets;
  std::vector<PlacementRule> rules;
  uint32_t choose_total_tries = 50;

  // Copies `m`. Elements are read with the sizes the host declared; fields
  // the host did not send keep their defaults. Throws Error(EINVAL) when a
  // declared element size is smaller than the ABI 1.1 layout.
  static PlacementMap from_c(const strata_placement_map &m) {
    auto need = [](uint32_t have, size_t want, const char *what) {
      if (have < want)
        throw make_error(EINVAL, "placement map: %s elements of %u bytes, ABI 1.1 needs %zu",
                         what, have, want);
    };
    need(m.type_size, sizeof(strata_placement_type), "type");
    need(m.device_size, sizeof(strata_placement_device), "device");
    need(m.bucket_size, sizeof(strata_placement_bucket), "bucket");
    need(m.rule_size, sizeof(strata_placement_rule), "rule");
    need(m.step_size, sizeof(strata_placement_step), "step");

    PlacementMap out;
    for (uint32_t i = 0; i < m.n_types; ++i) {
      const auto &t = element<strata_placement_type>(m.types, m.type_size, i);
      out.types.push_back({t.id, t.name ? t.name : ""});
    }
    for (uint32_t i = 0; i < m.n_class_names; ++i)
      out.class_names.emplace_back(m.class_names[i] ? m.class_names[i] : "");
    for (uint32_t i = 0; i < m.n_devices; ++i) {
      const auto &d = element<strata_placement_device>(m.devices, m.device_size, i);
      out.devices.push_back({d.id, d.class_index, d.weight, d.reweight});
    }
    for (uint32_t i = 0; i < m.n_buckets; ++i) {
      const auto &b = element<strata_placement_bucket>(m.buckets, m.bucket_size, i);
      PlacementBucket pb;
      pb.id = b.id;
      pb.type = b.type;
      pb.alg = b.alg;
      pb.items.assign(b.items, b.items + b.n_items);
      pb.item_weights.assign(b.item_weights, b.item_weights + b.n_items);
      out.buckets.push_back(std::move(pb));
    }
    for (uint32_t i = 0; i < m.n_rules; ++i) {
      const auto &r = element<strata_placement_rule>(m.rules, m.rule_size, i);
      PlacementRule pr;
      pr.id = r.id;
      pr.name = r.name ? r.name : "";
      for (uint32_t s = 0; s < r.n_steps; ++s) {
        const auto &st = element<strata_placement_step>(r.steps, m.step_size, s);
        pr.steps.push_back({st.op, st.arg1, st.arg2});
      }
      out.rules.push_back(std::move(pr));
    }
    if (m.choose_total_tries) out.choose_total_tries = m.choose_total_tries;
    return out;
  }

 private:
  template <class T>
  static const T &element(const void *base, uint32_t size, uint32_t i) {
    return *reinterpret_cast<const T *>(static_cast<const char *>(base) + size_t(size) * i);
  }
};

namespace detail {
template <class T, uint64_t Caps>
struct PlacementAdapter;
}  // namespace detail

class Placement {
 public:
  virtual ~Placement() = default;
  // STRATA_PLACEMENT_CAP_* bits of this handle; by default the bits given
  // to STRATA_PLACEMENT_PLUGIN (override when they depend on the map).
  virtual uint64_t capabilities() const { return declared_caps_; }
  // Thread-safe and allocation-free; see strata_placement_ops.map.
  virtual int map(uint32_t rule_id, uint32_t x, uint32_t num_rep, int32_t *out,
                  uint32_t cap) const = 0;

 private:
  template <class T, uint64_t Caps>
  friend struct detail::PlacementAdapter;
  uint64_t declared_caps_ = 0;
};

namespace detail {

template <class T, uint64_t Caps>
struct PlacementAdapter {
  static const Placement *self(const strata_placement *p) {
    return reinterpret_cast<const Placement *>(p);
  }
  static uint64_t capabilities(const strata_placement *p) { return self(p)->capabilities(); }
  static int create(const strata_placement_map *m, const strata_host_services *host,
                    strata_placement **out, strata_err *err) {
    *out = nullptr;
    return guard(err, [&] {
      if (!m) throw Error(EINVAL, "placement map is NULL");
      std::unique_ptr<Placement> p = T::create(PlacementMap::from_c(*m), Logger(host));
      p->declared_caps_ = Caps;
      *out = reinterpret_cast<strata_placement *>(p.release());
      return 0;
    });
  }
  static void destroy(strata_placement *p) {
    strata_err ignored;
    guard(&ignored, [&] {
      delete self(p);
      return 0;
    });
  }
  static int map(const strata_placement *p, uint32_t rule_id, uint32_t x, uint32_t num_rep,
                 int32_t *out, uint32_t cap) {
    return guard(nullptr, [&] { return self(p)->map(rule_id, x, num_rep, out, cap); });
  }

  static constexpr strata_placement_ops ops = {sizeof(strata_placement_ops), 0, {capabilities},
                                               create, destroy, map};
};

}  // namespace detail
}  // namespace strata::sdk

#define STRATA_PLACEMENT_PLUGIN(Class, name, version, description, caps)               \
  static const strata_plugin_descriptor strata_plugin_descriptor_ = {                   \
      sizeof(strata_plugin_descriptor),                                                 \
      STRATA_ABI_MAJOR,                                                                 \
      STRATA_ABI_MINOR,                                                                 \
      STRATA_KIND_PLACEMENT,                                                            \
      0,                                                                                \
      name,                                                                             \
      version,                                                                          \
      description,                                                                      \
      &::strata::sdk::detail::PlacementAdapter<Class, (caps)>::ops,                     \
      nullptr,                                                                          \
      0,                                                                                \
      {}};                                                                              \
  STRATA_DEFINE_PLUGIN_ENTRY(&strata_plugin_descriptor_)
