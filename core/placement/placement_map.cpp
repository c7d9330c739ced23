#include "placement/placement_map.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace strata::placement {

const Device *PlacementMap::device(int32_t id) const {
  for (const Device &d : devices)
    if (d.id == id) return &d;
  return nullptr;
}

const Bucket *PlacementMap::bucket(int32_t id) const {
  for (const Bucket &b : buckets)
    if (b.id == id) return &b;
  return nullptr;
}

const Rule *PlacementMap::rule(uint32_t id) const {
  for (const Rule &r : rules)
    if (r.id == id) return &r;
  return nullptr;
}

const Rule *PlacementMap::rule_by_name(const std::string &name) const {
  for (const Rule &r : rules)
    if (r.name == name) return &r;
  return nullptr;
}

const TypeDef *PlacementMap::type(uint32_t id) const {
  for (const TypeDef &t : types)
    if (t.id == id) return &t;
  return nullptr;
}

const TypeDef *PlacementMap::type_by_name(const std::string &name) const {
  for (const TypeDef &t : types)
    if (t.name == name) return &t;
  return nullptr;
}

bool PlacementMap::item_by_name(const std::string &name, int32_t *id) const {
  for (const Device &d : devices)
    if (d.name == name) return *id = d.id, true;
  for (const Bucket &b : buckets)
    if (b.name == name) return *id = b.id, true;
  return false;
}

std::string PlacementMap::item_name(int32_t id) const {
  if (id >= 0) {
    if (const Device *d = device(id)) return d->name;
  } else if (const Bucket *b = bucket(id)) {
    return b->name;
  }
  return "#" + std::to_string(id);
}

std::string PlacementMap::type_name(uint32_t id) const {
  const TypeDef *t = type(id);
  return t ? t->name : "type" + std::to_string(id);
}

std::vector<std::string> PlacementMap::device_classes() const {
  std::vector<std::string> out;
  for (const Device &d : devices)
    if (!d.device_class.empty() &&
        std::find(out.begin(), out.end(), d.device_class) == out.end())
      out.push_back(d.device_class);
  return out;
}

std::string format_pg(PgId pg) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu32 ".%" PRIx32, pg.pool, pg.seed);
  return buf;
}

bool parse_pg(const std::string &s, PgId *pg) {
  size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return false;
  char *end = nullptr;
  std::string pool = s.substr(0, dot), seed = s.substr(dot + 1);
  if (pool.find_first_not_of("0123456789") != std::string::npos) return false;
  if (seed.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return false;
  unsigned long long p = std::strtoull(pool.c_str(), &end, 10);
  unsigned long long q = std::strtoull(seed.c_str(), &end, 16);
  if (p > UINT32_MAX || q > UINT32_MAX || pool.size() > 10 || seed.size() > 8) return false;
  pg->pool = uint32_t(p);
  pg->seed = uint32_t(q);
  return true;
}

}  // namespace strata::placement
