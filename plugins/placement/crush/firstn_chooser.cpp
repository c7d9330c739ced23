#include "firstn_chooser.h"

#include "small_counter.h"

namespace strata::placement_plugin {

namespace {

bool contains(const int32_t *v, int n, int32_t id) {
  for (int i = 0; i < n; ++i)
    if (v[i] == id) return true;
  return false;
}

}  // namespace

const Straw2Child *FirstnChooser::descend(int node, uint64_t seed, uint32_t type) const {
  for (;;) {
    const Straw2Child *c = tree_.choose(node, seed);
    if (!c || c->type == type) return c;
    if (c->node < 0) return nullptr;  // a device above the wanted level
    node = c->node;
  }
}

int FirstnChooser::choose(int node, uint32_t x, int count, uint32_t type, bool leaf,
                          int32_t *items, int32_t *leaves, int n_before) const {
  int have = n_before;
  SmallCounter<64> domain_rejections;
  uint32_t failures = 0;
  for (uint32_t r = 0; have - n_before < count && failures < total_tries_; ++r) {
    const Straw2Child *c = descend(node, draw_seed(x, r), type);
    if (!c || contains(items, have, c->id)) {
      ++failures;
      continue;
    }
    int32_t device = c->id;
    if (leaf) {
      const Straw2Child *d = descend(c->node, draw_seed(x, domain_rejections.get(c->id)), 0);
      if (!d || !keeps_input(x, d->id, d->reweight) || contains(leaves, have, d->id)) {
        domain_rejections.bump(c->id);
        ++failures;
        continue;
      }
      device = d->id;
    } else if (c->node < 0 && !keeps_input(x, c->id, c->reweight)) {
      ++failures;
      continue;
    }
    items[have] = c->id;
    leaves[have] = device;
    ++have;
    failures = 0;
  }
  return have;
}

}  // namespace strata::placement_plugin
