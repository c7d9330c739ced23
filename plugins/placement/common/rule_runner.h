// Interpreting a rule's steps (TAKE, CHOOSE, CHOOSELEAF, EMIT) is the same
// for every algorithm; only "choose n items of a type under this bucket"
// differs. run_rule() does the bookkeeping on the stack (no allocation) and
// asks the algorithm's selector for each choice.
#pragma once

#include <algorithm>
#include <cstdint>

#include "strata/cpp/placement.hpp"

namespace strata::placement_plugin {

constexpr int kMaxWork = STRATA_PLACEMENT_MAX_RESULT;

// What one CHOOSE/CHOOSELEAF step asks for.
struct ChooseRequest {
  size_t step_index;  // position in the rule, for per-step precomputation
  int cls;            // device class of the current TAKE, or kAllClasses
  uint32_t type;      // type of the items to choose (0 = devices)
  bool leaf;          // also pick one device under each chosen item
  int count;          // how many to choose under this bucket
};

// Selector: int operator()(const ChooseRequest &, int32_t from_bucket,
//   uint32_t x, int32_t *items, int32_t *leaves, int n_before) const
// appends up to req.count picks at items[n_before..] (and their devices at
// leaves[n_before..] when req.leaf), distinct from items[0..n_before), and
// returns the new total.
template <class Selector>
int run_rule(const sdk::PlacementRule &rule, uint32_t x, uint32_t num_rep, int32_t *out,
             uint32_t cap, const Selector &select) {
  int32_t work[kMaxWork];
  int32_t items[kMaxWork];
  int32_t leaves[kMaxWork];
  int n_work = 0;
  uint32_t n_out = 0;
  int cls = -1;
  for (size_t si = 0; si < rule.steps.size(); ++si) {
    const sdk::PlacementStep &s = rule.steps[si];
    switch (s.op) {
      case STRATA_PLACEMENT_STEP_TAKE:
        work[0] = s.arg1;
        n_work = 1;
        cls = s.arg2;
        break;
      case STRATA_PLACEMENT_STEP_CHOOSE_FIRSTN:
      case STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN: {
        int n = s.arg1 > 0 ? s.arg1 : int(num_rep) + s.arg1;
        bool leaf = s.op == STRATA_PLACEMENT_STEP_CHOOSELEAF_FIRSTN && s.arg2 != 0;
        int n_items = 0;
        for (int w = 0; w < n_work && n > 0; ++w) {
          if (work[w] >= 0) continue;  // nothing to choose under a device
          int want = std::min(n, kMaxWork - n_items);
          if (want <= 0) break;
          ChooseRequest req{si, cls, uint32_t(s.arg2), leaf, want};
          n_items = select(req, work[w], x, items, leaves, n_items);
        }
        std::copy(leaf ? leaves : items, (leaf ? leaves : items) + n_items, work);
        n_work = n_items;
        break;
      }
      case STRATA_PLACEMENT_STEP_EMIT:
        for (int i = 0; i < n_work && n_out < cap; ++i) out[n_out++] = work[i];
        n_work = 0;
        break;
      default:
        break;  // refused at create()
    }
  }
  return int(n_out);
}

}  // namespace strata::placement_plugin
