// CHOOSE / CHOOSELEAF "firstn" over a straw2 hierarchy.
//
// The chooser walks a stream of candidates for input x: attempt r descends
// from the start bucket, at every level taking the straw2 winner for
// (x, r), down to an item of the wanted type. Candidates that collide with an
// item already chosen, lead nowhere, or whose device turns the input away
// (out, or reweighted) are skipped, and the first `count` good ones are the
// result. Because the stream depends only on the map and x, a weight change
// that alters one candidate changes the result only where that candidate
// enters or leaves it.
//
// Inside a failure domain the device is drawn with an attempt number that
// counts only this domain's own rejections, not the position in the stream:
// a domain that moves from the second to the first slot keeps its device, so
// reordering replicas never moves data.
#pragma once

#include <cstdint>

#include "straw2_tree.h"

namespace strata::placement_plugin {

class FirstnChooser {
 public:
  // total_tries: failed attempts allowed per chosen item (the map's
  // choose_total_tries); after that the result comes up short.
  FirstnChooser(const Straw2Tree &tree, uint32_t total_tries)
      : tree_(tree), total_tries_(total_tries) {}

  // Appends up to `count` items of `type` under bucket index `node` at
  // items[n_before..] (devices at leaves[..] too when `leaf`), distinct from
  // items[0..n_before); returns the new total.
  int choose(int node, uint32_t x, int count, uint32_t type, bool leaf, int32_t *items,
             int32_t *leaves, int n_before) const;

 private:
  const Straw2Child *descend(int node, uint64_t seed, uint32_t type) const;

  const Straw2Tree &tree_;
  uint32_t total_tries_;
};

}  // namespace strata::placement_plugin
