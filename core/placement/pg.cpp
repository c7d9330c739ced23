#include "placement/pg.h"

#include <xxhash.h>

namespace strata::placement {

uint64_t object_hash(std::string_view name) { return XXH64(name.data(), name.size(), 0); }

uint32_t stable_mod(uint64_t hash, uint32_t pg_num) {
  uint64_t mask = 1;
  while (mask < pg_num) mask <<= 1;
  mask -= 1;  // next power of two minus one
  uint64_t folded = hash & mask;
  return uint32_t(folded < pg_num ? folded : hash & (mask >> 1));
}

uint32_t pg_input(PgId pg) {
  // A bijective 64-bit mixer (multiply/xorshift rounds); the low 32 bits.
  uint64_t h = (uint64_t(pg.pool) << 32) | pg.seed;
  h ^= h >> 31;
  h *= 0x7fb5d329728ea185ull;
  h ^= h >> 27;
  h *= 0x81dadef4bc2dd44dull;
  h ^= h >> 33;
  return uint32_t(h);
}

}  // namespace strata::placement
