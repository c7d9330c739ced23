// The deterministic random draw placement is built on.
//
// straw2 (and weighted rendezvous hashing) give every candidate item a
// "length" ln(u) / weight, with u uniform in (0, 1] drawn from a hash of
// (input, item, attempt); the longest (the one closest to zero) wins. Because
// an item's draw depends only on its own id and weight, changing one item's
// weight can only move inputs to or from that item.
//
// Every machine must compute the same bits. The logarithm comes from a
// table built at compile time by an integer algorithm (no libm, whose last
// bit may differ between C libraries). The division by the weight is a
// multiply by 1.0 / weight in IEEE-754 double: both the reciprocal and the
// product of exactly representable values are correctly rounded, so they
// are bit-identical on every IEEE machine (x86-64 computes doubles in SSE2,
// never in x87 extended precision; -ffast-math must never be used here).
// The smallest cost (= the longest straw) wins; ties go to the first item.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>

#include "strata/placement.h"

namespace strata::placement_plugin {

using Cost = double;
constexpr Cost kInfiniteCost = std::numeric_limits<double>::infinity();

// A 64-bit finaliser with full avalanche (constants of Stafford's "mix13"
// variant of the splitmix64 finaliser). A bijection of 64-bit values.
constexpr uint64_t mix64(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

// The per-(input, attempt) part of a draw, hashed once and shared by every
// item of one bucket. Distinct (x, r) give distinct seeds.
constexpr uint64_t draw_seed(uint32_t x, uint32_t r) {
  return mix64((uint64_t(x) << 32 | r) ^ 0x5354524154415032ull /* "STRATAP2" */);
}

// Per-item hashing constants, computed once when the map is compiled.
struct ItemKey {
  uint64_t a;
  uint64_t b;  // odd
};

inline ItemKey item_key(int32_t item) {
  uint64_t id = uint32_t(item);
  return {mix64(id ^ 0x6974656d6b657941ull), mix64(id ^ 0x6974656d6b657942ull) | 1};
}

// 32 uniform bits for (seed, item): one 64x64->128 multiply of the seed
// (already mixed) keyed by the item, folded high ^ low ("multiply-mix", as
// in wyhash). One multiply instead of a full mix keeps a draw a few ns.
inline uint32_t draw_bits(uint64_t seed, const ItemKey &key) {
  unsigned __int128 p = (unsigned __int128)(seed ^ key.a) * key.b;
  return uint32_t((uint64_t(p) ^ uint64_t(p >> 64)) >> 32);
}

namespace detail {

constexpr int kLogTableBits = 10;
constexpr int kLogTableSize = 1 << kLogTableBits;

// log2(y) for y in [1, 2) given in Q62, as a Q48 fraction in [0, 1), by
// repeated squaring: squaring doubles the logarithm, and whether the square
// reaches 2 is the next binary digit.
constexpr uint64_t log2_fraction_q48(uint64_t y_q62) {
  unsigned __int128 y = y_q62;
  uint64_t result = 0;
  for (int bit = 47; bit >= 0; --bit) {
    y = (y * y) >> 62;
    if (y >= (unsigned __int128)2 << 62) {
      y >>= 1;
      result |= 1ull << bit;
    }
  }
  return result;
}

// log2(1 + i / 1024) in Q48 for i = 0 .. 1024 (the last entry is exactly 1).
constexpr std::array<uint64_t, kLogTableSize + 1> make_log2_table() {
  std::array<uint64_t, kLogTableSize + 1> t{};
  for (int i = 0; i < kLogTableSize; ++i)
    t[i] = log2_fraction_q48((uint64_t(1) << 62) + (uint64_t(i) << (62 - kLogTableBits)));
  t[kLogTableSize] = uint64_t(1) << 48;
  return t;
}

inline constexpr std::array<uint64_t, kLogTableSize + 1> kLog2Table = make_log2_table();

}  // namespace detail

// -log2(u) in Q48 where u = (bits + 1) / 2^32, in [0, 32 * 2^48]. Linear
// interpolation in a 1025-entry table: monotone, error below 2e-7.
//
// The integer part and the leading fraction bits of log2(v) are read from
// the IEEE-754 fields of double(v): the conversion is exact for v < 2^53,
// so this is integer arithmetic in disguise (bit-identical everywhere), and
// cheaper than count-leading-zeros plus a variable shift.
inline uint64_t neg_log2_q48(uint32_t bits) {
  double d = double(uint64_t(bits) + 1);  // 1 .. 2^32, exact
  uint64_t f;
  std::memcpy(&f, &d, sizeof f);
  uint64_t n = (f >> 52) - 1023;  // integer part of log2(v)
  unsigned idx = unsigned(f >> (52 - detail::kLogTableBits)) & (detail::kLogTableSize - 1);
  uint64_t rem = (f >> (52 - detail::kLogTableBits - 20)) & ((1u << 20) - 1);
  uint64_t lo = detail::kLog2Table[idx];
  uint64_t hi = detail::kLog2Table[idx + 1];
  uint64_t log2v = (n << 48) + lo + (((hi - lo) * rem) >> 20);
  return (uint64_t(32) << 48) - log2v;
}

// The reciprocal of a (summed) 16.16 weight: cost = -log2(u) * inverse.
// REQUIRES: weight > 0 (zero-weight items are left out, they never win).
// Exact conversion (weights stay far below 2^53), correctly rounded divide.
inline double inverse_weight(uint64_t weight) { return 1.0 / double(weight); }

inline Cost draw_cost(uint64_t seed, const ItemKey &key, double inv_weight) {
  return double(neg_log2_q48(draw_bits(seed, key))) * inv_weight;
}

// Reweight as probabilistic rejection: a device with reweight w keeps a
// fraction w of the inputs that land on it; the rest are drawn again.
inline bool keeps_input(uint32_t x, int32_t device, uint32_t reweight) {
  if (reweight >= STRATA_PLACEMENT_WEIGHT_ONE) return true;
  if (reweight == 0) return false;
  uint64_t h = mix64((uint64_t(x) << 32 | uint32_t(device)) ^ 0x52455745494748ull /* "REWEIGH" */);
  return uint32_t(h >> 48) < reweight;
}

}  // namespace strata::placement_plugin
