#include "placement/map_validation.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "placement/text_format.h"

namespace strata::placement {

namespace {

int line_at(const std::vector<int> &v, size_t i) { return i < v.size() ? v[i] : 0; }

int line_at(const std::vector<std::vector<int>> &v, size_t i, size_t j) {
  return i < v.size() ? line_at(v[i], j) : 0;
}

Status fail(int line, const std::string &what, const std::string &msg) {
  return Status::Error(EINVAL, (line > 0 ? "line " + std::to_string(line) : what) + ": " + msg);
}

std::string quoted(const std::string &s) { return "'" + s + "'"; }

// Indexes and weights the rule checks need, for a map whose items are known
// to form a forest.
class WeightIndex {
 public:
  explicit WeightIndex(const PlacementMap &map) : map_(map) {
    for (size_t i = 0; i < map.devices.size(); ++i) devices_[map.devices[i].id] = i;
    for (size_t i = 0; i < map.buckets.size(); ++i) buckets_[map.buckets[i].id] = i;
  }

  // Subtree weight counting devices of `cls` (empty: all).
  uint64_t weight(int32_t item, const std::string &cls) {
    if (item >= 0) {
      const Device &d = map_.devices[devices_.at(item)];
      return cls.empty() || d.device_class == cls ? d.weight : 0;
    }
    auto key = std::make_pair(item, cls);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    uint64_t sum = 0;
    for (int32_t child : map_.buckets[buckets_.at(item)].items) sum += weight(child, cls);
    memo_[key] = sum;
    return sum;
  }

  uint32_t type_of(int32_t item) const {
    return item >= 0 ? 0 : map_.buckets[buckets_.at(item)].type;
  }

  // Items of `type` with positive weight under bucket `from` (not `from`
  // itself), outermost first.
  std::vector<int32_t> items_of_type(int32_t from, uint32_t type, const std::string &cls) {
    std::vector<int32_t> out;
    std::function<void(int32_t)> walk = [&](int32_t b) {
      for (int32_t child : map_.buckets[buckets_.at(b)].items) {
        if (weight(child, cls) == 0) continue;
        if (type_of(child) == type)
          out.push_back(child);
        else if (child < 0)
          walk(child);
      }
    };
    if (from < 0) walk(from);
    return out;
  }

 private:
  const PlacementMap &map_;
  std::unordered_map<int32_t, size_t> devices_, buckets_;
  std::map<std::pair<int32_t, std::string>, uint64_t> memo_;
};

// Walks a rule's steps; num_rep 0 means "unknown: counts relative to the
// replica count need at least one item". `at` gives the error prefix.
Status check_rule_steps(const PlacementMap &map, const Rule &rule, uint32_t num_rep,
                        WeightIndex &index, const std::function<Status(size_t, std::string)> &at) {
  std::vector<std::string> classes = map.device_classes();
  std::vector<int32_t> working;
  std::string cls;
  bool taken = false, emitted = false;
  for (size_t si = 0; si < rule.steps.size(); ++si) {
    const Step &s = rule.steps[si];
    switch (s.op) {
      case StepOp::kTake: {
        if (!map.bucket(s.bucket))
          return at(si, "rule " + quoted(rule.name) + ": take of unknown bucket " +
                            map.item_name(s.bucket));
        if (!s.device_class.empty() &&
            std::find(classes.begin(), classes.end(), s.device_class) == classes.end())
          return at(si, "rule " + quoted(rule.name) + " cannot be satisfied: no device has class " +
                            quoted(s.device_class));
        cls = s.device_class;
        if (index.weight(s.bucket, cls) == 0)
          return at(si, "rule " + quoted(rule.name) + " cannot be satisfied: no device" +
                            (cls.empty() ? "" : " of class " + quoted(cls)) +
                            " with weight under " + quoted(map.item_name(s.bucket)));
        working = {s.bucket};
        taken = true;
        break;
      }
      case StepOp::kChoose:
      case StepOp::kChooseleaf: {
        if (!taken) return at(si, "rule " + quoted(rule.name) + ": choose before any take");
        if (!map.type(s.type))
          return at(si, "rule " + quoted(rule.name) + ": unknown type " + std::to_string(s.type));
        int64_t need = s.count > 0    ? s.count
                       : num_rep == 0 ? 1  // replica count unknown: at least one
                                      : std::max<int64_t>(0, int64_t(num_rep) + s.count);
        std::vector<int32_t> next;
        for (int32_t w : working) {
          std::vector<int32_t> found = index.items_of_type(w, s.type, cls);
          if (int64_t(found.size()) < need)
            return at(si, "rule " + quoted(rule.name) + " cannot be satisfied: '" +
                              step_text(map, s) + "' needs " + std::to_string(need) + " " +
                              quoted(map.type_name(s.type)) + " under " +
                              quoted(map.item_name(w)) +
                              (cls.empty() ? "" : " with class " + quoted(cls)) + ", found " +
                              std::to_string(found.size()));
          if (s.op == StepOp::kChoose) next.insert(next.end(), found.begin(), found.end());
        }
        working = std::move(next);
        break;
      }
      case StepOp::kEmit:
        if (!taken) return at(si, "rule " + quoted(rule.name) + ": emit before any take");
        emitted = true;
        working.clear();
        taken = false;
        break;
    }
  }
  if (rule.steps.empty() || rule.steps.back().op != StepOp::kEmit || !emitted)
    return at(rule.steps.empty() ? 0 : rule.steps.size() - 1,
              "rule " + quoted(rule.name) + " does not end with emit");
  return Status::OK();
}

}  // namespace

Status validate_map(const PlacementMap &map, const SourceLines *lines) {
  static const SourceLines kNoLines;
  const SourceLines &L = lines ? *lines : kNoLines;

  // Types.
  bool has_device_type = false;
  for (size_t i = 0; i < map.types.size(); ++i) {
    const TypeDef &t = map.types[i];
    if (t.id == 0) has_device_type = true;
    for (size_t j = 0; j < i; ++j) {
      if (map.types[j].id == t.id)
        return fail(line_at(L.types, i), "type " + quoted(t.name),
                    "duplicate type id " + std::to_string(t.id) + " (already " +
                        quoted(map.types[j].name) + ")");
      if (map.types[j].name == t.name)
        return fail(line_at(L.types, i), "type " + quoted(t.name), "duplicate type name");
    }
  }
  if (!has_device_type)
    return Status::Error(EINVAL, "the map has no type 0 (the device type, e.g. 'type 0 device')");

  // Devices and bucket headers: ids and names unique across both.
  std::unordered_map<int32_t, std::string> id_owner;
  std::unordered_map<std::string, int32_t> name_owner;
  auto claim = [&](int32_t id, const std::string &name, int line, const std::string &what) {
    if (auto it = id_owner.find(id); it != id_owner.end())
      return fail(line, what, "duplicate id " + std::to_string(id) + " (already used by " +
                                  quoted(it->second) + ")");
    if (name.empty()) return fail(line, what, "missing name");
    if (name_owner.count(name)) return fail(line, what, "duplicate name " + quoted(name));
    id_owner[id] = name;
    name_owner[name] = id;
    return Status::OK();
  };
  for (size_t i = 0; i < map.devices.size(); ++i) {
    const Device &d = map.devices[i];
    std::string what = "device " + quoted(d.name);
    if (d.id < 0) return fail(line_at(L.devices, i), what, "device ids must be >= 0");
    if (Status s = claim(d.id, d.name, line_at(L.devices, i), what); !s.ok()) return s;
    if (d.reweight > kWeightOne)
      return fail(line_at(L.devices, i), what, "reweight above 1.0");
  }
  for (size_t i = 0; i < map.buckets.size(); ++i) {
    const Bucket &b = map.buckets[i];
    std::string what = "bucket " + quoted(b.name);
    if (b.id >= 0) return fail(line_at(L.buckets, i), what, "bucket ids must be negative");
    if (Status s = claim(b.id, b.name, line_at(L.buckets, i), what); !s.ok()) return s;
    if (b.type == 0) return fail(line_at(L.buckets, i), what, "a bucket cannot have type 0");
    if (!map.type(b.type))
      return fail(line_at(L.buckets, i), what, "unknown type " + std::to_string(b.type));
  }

  // Items: known, in one bucket each.
  std::unordered_map<int32_t, size_t> parent;  // item -> bucket index
  for (size_t i = 0; i < map.buckets.size(); ++i) {
    const Bucket &b = map.buckets[i];
    for (size_t j = 0; j < b.items.size(); ++j) {
      int32_t item = b.items[j];
      int line = line_at(L.bucket_items, i, j);
      std::string what = "bucket " + quoted(b.name);
      if (!id_owner.count(item))
        return fail(line, what,
                    std::string("unknown ") + (item < 0 ? "bucket" : "device") + " id " +
                        std::to_string(item));
      if (auto it = parent.find(item); it != parent.end())
        return fail(line, what,
                    quoted(map.item_name(item)) + " is already in bucket " +
                        quoted(map.buckets[it->second].name) +
                        (line_at(L.buckets, it->second) > 0
                             ? " (line " + std::to_string(line_at(L.buckets, it->second)) + ")"
                             : ""));
      parent[item] = i;
    }
  }

  // Cycles: with one parent each, following parents from a bucket in a cycle
  // comes back to it.
  for (size_t i = 0; i < map.buckets.size(); ++i) {
    std::vector<int32_t> chain{map.buckets[i].id};
    int32_t at = map.buckets[i].id;
    while (parent.count(at) && chain.size() <= map.buckets.size() + 1) {
      at = map.buckets[parent[at]].id;
      if (at == map.buckets[i].id) {
        // chain lists parents upwards; read downwards it is "contains".
        std::string path = quoted(map.buckets[i].name);
        for (auto it = chain.rbegin(); it + 1 != chain.rend(); ++it)
          path += " contains " + quoted(map.item_name(*it));
        path += " contains " + quoted(map.buckets[i].name);
        return fail(line_at(L.buckets, i), "bucket " + quoted(map.buckets[i].name),
                    "cycle: " + path);
      }
      chain.push_back(at);
    }
  }

  // Weights fit 16.16 at every level.
  WeightIndex index(map);
  for (size_t i = 0; i < map.buckets.size(); ++i)
    if (index.weight(map.buckets[i].id, "") > UINT32_MAX)
      return fail(line_at(L.buckets, i), "bucket " + quoted(map.buckets[i].name),
                  "total weight exceeds 65535.99998 (the 16.16 limit)");

  // Rules.
  for (size_t i = 0; i < map.rules.size(); ++i) {
    const Rule &r = map.rules[i];
    for (size_t j = 0; j < i; ++j) {
      if (map.rules[j].id == r.id)
        return fail(line_at(L.rules, i), "rule " + quoted(r.name),
                    "duplicate rule id " + std::to_string(r.id) + " (already " +
                        quoted(map.rules[j].name) + ")");
      if (map.rules[j].name == r.name)
        return fail(line_at(L.rules, i), "rule " + quoted(r.name), "duplicate rule name");
    }
    auto at = [&](size_t step, std::string msg) {
      int line = line_at(L.rule_steps, i, step);
      if (line == 0) line = line_at(L.rules, i);
      return fail(line, "rule " + quoted(r.name), std::move(msg));
    };
    if (Status s = check_rule_steps(map, r, 0, index, at); !s.ok()) return s;
  }

  // Exceptions.
  for (const auto &[pg, remaps] : map.exceptions) {
    auto it = L.exceptions.find(pg);
    for (size_t j = 0; j < remaps.size(); ++j) {
      int line = it != L.exceptions.end() ? line_at(it->second, j) : 0;
      std::string what = "exception " + format_pg(pg);
      for (int32_t dev : {remaps[j].from, remaps[j].to})
        if (dev < 0 || !map.device(dev))
          return fail(line, what, "unknown device " + map.item_name(dev));
      if (remaps[j].from == remaps[j].to)
        return fail(line, what, "replaces " + quoted(map.item_name(remaps[j].from)) + " by itself");
    }
  }
  return Status::OK();
}

Status check_rule_capacity(const PlacementMap &map, const Rule &rule, uint32_t num_rep) {
  WeightIndex index(map);
  auto at = [&](size_t, std::string msg) { return Status::Error(EINVAL, std::move(msg)); };
  return check_rule_steps(map, rule, num_rep, index, at);
}

}  // namespace strata::placement
