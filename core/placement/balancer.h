// The balancer: a small exception table that brings every device of a pool
// to within a tolerance (default ±1 PG) of its weighted share, on top of
// whatever the placement plugin computes.
//
// It works on whole PG replicas: repeatedly move one replica from the most
// over-full device to an under-full one that the rule allows (same take and
// class, distinct failure domain, same outer buckets), preferring moves
// that cancel an existing exception. Each move adds at most one entry.
//
// With a previous mapping (`balance --from OLD` after a topology change) it
// first pins every PG back to where it was, then lets a change through only
// where it moves a replica to a device that needs data from one that has
// too much, and balances the rest the same way: data moves only to fill the
// new capacity.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "placement/placement_map.h"
#include "placement/placer.h"
#include "placement/pool_mapping.h"

namespace strata::placement {

struct BalanceOptions {
  PoolSpec pool;
  double max_deviation = 1.0;  // in PGs, on either side of the share
  uint64_t max_moves = 1000000;
};

struct BalanceReport {
  uint64_t exceptions_before = 0;  // remaps of this pool in the input map
  uint64_t exceptions_after = 0;
  uint64_t replicas = 0;        // replicas in the starting placement
  uint64_t replicas_moved = 0;  // replicas whose device changed from it
  uint64_t moves = 0;           // balancing moves made
  double deviation_before = 0;  // largest |count - share| in PGs
  double deviation_after = 0;
};

// Returns `map` with the exception table of options.pool.pool replaced.
// `previous`: the effective mapping to stay close to (nullptr: start from
// the map's own effective mapping). REQUIRES: placer made from `map`.
Result<PlacementMap> balance(const Placer &placer, const PlacementMap &map,
                             const BalanceOptions &options, const PoolMapping *previous,
                             BalanceReport *report);

}  // namespace strata::placement
