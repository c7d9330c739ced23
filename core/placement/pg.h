// Object name -> placement group -> placement input.
//
// An object's PG is a stable hash of its name (XXH64) reduced to pg_num with
// a "stable mod": hashes are masked to the next power of two, and values in
// the upper, not yet existing half fold onto their lower half. When pg_num
// grows by one, exactly one PG splits (PG p - 2^k gives some of its objects
// to the new PG p) and every other object stays where it was.
#pragma once

#include <cstdint>
#include <string_view>

#include "placement/placement_map.h"

namespace strata::placement {

uint64_t object_hash(std::string_view name);

// The stable mod of `hash` by pg_num (> 0).
uint32_t stable_mod(uint64_t hash, uint32_t pg_num);

inline uint32_t object_to_pg(std::string_view name, uint32_t pg_num) {
  return stable_mod(object_hash(name), pg_num);
}

// The placement input x of a PG: its seed mixed with the pool id, so that
// the PGs of different pools do not all land on the same devices.
uint32_t pg_input(PgId pg);

}  // namespace strata::placement
