#include "placement/balancer.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "placement/exception_table.h"
#include "placement/rule_shape.h"
#include "placement/target_shares.h"
#include "placement/topology.h"

namespace strata::placement {

namespace {

bool contains(const std::vector<int32_t> &v, int32_t d) {
  return std::find(v.begin(), v.end(), d) != v.end();
}

struct Slot {
  uint32_t seed;
  int pos;
};

class Balancer {
 public:
  Balancer(const Topology &topo, const Rule &rule, const BalanceOptions &opt, PoolMapping &pm)
      : topo_(topo), shape_(rule), opt_(opt), raw_(pm.raw), eff_(pm.effective) {
    for (const auto &[id, per_input] :
         expected_replicas_per_input(topo, rule, opt.pool.num_rep))
      target_[id] = per_input * opt.pool.pg_num;
  }

  // Whether eff[seed][pos] may become `to`, checked against both the raw
  // and the current result so the exception entries hold in any order.
  bool can_move(uint32_t seed, int pos, int32_t to) const {
    const auto &eff = eff_[seed];
    const auto &raw = raw_[seed];
    if (contains(eff, to)) return false;
    if (!substitution_allowed(topo_, shape_, eff.data(), int(eff.size()), pos, to)) return false;
    if (to == raw[size_t(pos)]) return true;  // cancels an exception
    if (contains(raw, to)) return false;
    return substitution_allowed(topo_, shape_, raw.data(), int(raw.size()), pos, to);
  }

  // --from: start from the previous placement wherever the rule allows, then
  // let through the plugin's changes that fill a device needing data.
  void pin_to(const PoolMapping &previous) {
    std::vector<std::vector<int>> pinned(eff_.size());  // positions pinned per PG
    for (uint32_t seed = 0; seed < eff_.size() && seed < previous.effective.size(); ++seed) {
      const auto &old = previous.effective[seed];
      eff_[seed] = raw_[seed];
      for (int pos = 0; pos < int(raw_[seed].size()); ++pos) {
        if (contains(old, raw_[seed][size_t(pos)])) continue;
        for (int32_t e : old) {
          if (contains(raw_[seed], e) || !can_move(seed, pos, e)) continue;
          eff_[seed][size_t(pos)] = e;
          pinned[seed].push_back(pos);
          break;
        }
      }
    }
    count_all();
    for (uint32_t seed = 0; seed < eff_.size(); ++seed) {
      for (int pos : pinned[seed]) {
        int32_t keep = eff_[seed][size_t(pos)];
        int32_t incoming = raw_[seed][size_t(pos)];
        // Half a PG of slack each way: a device that is one short of its
        // share after giving a PG away is not "in need", so changes between
        // devices that keep their share are refused.
        bool needs = double(count_[incoming]) + 1 <= target(incoming) + 0.5;
        bool spare = double(count_[keep]) >= target(keep) + 0.5;
        if (needs && spare && can_move(seed, pos, incoming)) move(seed, pos, incoming);
      }
    }
  }

  void count_all() {
    count_.clear();
    on_device_.clear();
    for (const auto &[id, t] : target_) count_[id] = 0;
    for (uint32_t seed = 0; seed < eff_.size(); ++seed)
      for (int pos = 0; pos < int(eff_[seed].size()); ++pos) {
        int32_t d = eff_[seed][size_t(pos)];
        ++count_[d];
        on_device_[d].push_back({seed, pos});
      }
  }

  double target(int32_t d) const {
    auto it = target_.find(d);
    return it == target_.end() ? 0.0 : it->second;
  }
  double excess(int32_t d) const { return double(count_.at(d)) - target(d); }

  double max_abs_deviation() const {
    double worst = 0;
    for (const auto &[d, c] : count_) worst = std::max(worst, std::fabs(double(c) - target(d)));
    return worst;
  }

  void move(uint32_t seed, int pos, int32_t to) {
    int32_t from = eff_[seed][size_t(pos)];
    eff_[seed][size_t(pos)] = to;
    --count_[from];
    ++count_[to];
    auto &slots = on_device_[from];
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i].seed == seed && slots[i].pos == pos) {
        slots[i] = slots.back();
        slots.pop_back();
        break;
      }
    on_device_[to].push_back({seed, pos});
  }

  // One replica from `from` to `to`, preferring one that cancels an
  // exception. False if none of from's PGs can go there.
  bool move_one(int32_t from, int32_t to) {
    auto &slots = on_device_[from];
    for (int pass = 0; pass < 2; ++pass)
      for (const Slot &s : slots) {
        bool restores = raw_[s.seed][size_t(s.pos)] == to;
        if ((pass == 0) != restores) continue;
        if (can_move(s.seed, s.pos, to)) {
          move(s.seed, s.pos, to);
          return true;
        }
      }
    return false;
  }

  uint64_t run() {
    const double tol = opt_.max_deviation;
    uint64_t moves = 0;
    std::vector<int32_t> devices;
    for (const auto &[d, c] : count_) devices.push_back(d);
    while (moves < opt_.max_moves) {
      // Most over-full first; ties by id so the result is reproducible.
      std::sort(devices.begin(), devices.end(), [&](int32_t a, int32_t b) {
        double ea = excess(a), eb = excess(b);
        return ea != eb ? ea > eb : a < b;
      });
      bool over = excess(devices.front()) > tol, under = excess(devices.back()) < -tol;
      if (!over && !under) break;
      bool moved = false;
      if (over) {
        for (size_t i = 0; i < devices.size() && !moved && excess(devices[i]) > tol; ++i)
          for (size_t j = devices.size(); j-- > 0 && !moved;) {
            int32_t o = devices[i], u = devices[j];
            if (excess(u) + 1 > tol || excess(u) + 1 >= excess(o)) break;
            moved = move_one(o, u);
          }
      }
      if (!moved && under) {
        for (size_t j = devices.size(); j-- > 0 && !moved && excess(devices[j]) < -tol;)
          for (size_t i = 0; i < devices.size() && !moved; ++i) {
            int32_t o = devices[i], u = devices[j];
            if (excess(o) - 1 < -tol || excess(o) - 1 <= excess(u)) break;
            moved = move_one(o, u);
          }
      }
      if (!moved) break;
      ++moves;
    }
    return moves;
  }

  ExceptionTable exceptions(uint32_t pool) const {
    ExceptionTable out;
    for (uint32_t seed = 0; seed < eff_.size(); ++seed)
      for (size_t pos = 0; pos < eff_[seed].size(); ++pos)
        if (eff_[seed][pos] != raw_[seed][pos])
          out[PgId{pool, seed}].push_back({raw_[seed][pos], eff_[seed][pos]});
    return out;
  }

  const std::vector<std::vector<int32_t>> &effective() const { return eff_; }

 private:
  const Topology &topo_;
  RuleShape shape_;
  const BalanceOptions &opt_;
  const std::vector<std::vector<int32_t>> &raw_;
  std::vector<std::vector<int32_t>> &eff_;
  std::map<int32_t, double> target_;
  std::map<int32_t, int64_t> count_;
  std::unordered_map<int32_t, std::vector<Slot>> on_device_;
};

uint64_t count_remaps(const ExceptionTable &t, uint32_t pool) {
  uint64_t n = 0;
  for (const auto &[pg, remaps] : t)
    if (pg.pool == pool) n += remaps.size();
  return n;
}

}  // namespace

Result<PlacementMap> balance(const Placer &placer, const PlacementMap &map,
                             const BalanceOptions &options, const PoolMapping *previous,
                             BalanceReport *report) {
  const Rule *rule = map.rule(options.pool.rule);
  if (!rule) return Status::Error(ENOENT, "no rule with id " + std::to_string(options.pool.rule));
  Topology topo(map);
  Result<PoolMapping> mapped = map_pool(placer, topo, options.pool);
  if (!mapped.ok()) return mapped.status();
  PoolMapping pm = std::move(mapped.value());
  const std::vector<std::vector<int32_t>> start = previous ? previous->effective : pm.effective;

  Balancer b(topo, *rule, options, pm);
  b.count_all();
  BalanceReport r;
  r.exceptions_before = count_remaps(map.exceptions, options.pool.pool);
  r.deviation_before = b.max_abs_deviation();
  if (previous) b.pin_to(*previous);
  r.moves = b.run();
  r.deviation_after = b.max_abs_deviation();

  PlacementMap out = map;
  for (auto it = out.exceptions.begin(); it != out.exceptions.end();)
    it = it->first.pool == options.pool.pool ? out.exceptions.erase(it) : std::next(it);
  for (auto &[pg, remaps] : b.exceptions(options.pool.pool)) out.exceptions[pg] = remaps;
  r.exceptions_after = count_remaps(out.exceptions, options.pool.pool);

  const auto &eff = b.effective();
  for (size_t seed = 0; seed < eff.size(); ++seed) {
    static const std::vector<int32_t> kNone;
    const auto &old = seed < start.size() ? start[seed] : kNone;
    r.replicas += old.size();
    for (int32_t d : eff[seed])
      if (!contains(old, d)) ++r.replicas_moved;
  }
  if (report) *report = r;
  return out;
}

}  // namespace strata::placement
