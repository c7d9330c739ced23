// A deterministic transaction generator: txn(k) depends on k (and the
// generator's seed) only, never on what the store holds, so a crashed child
// and its parent agree on every transaction without talking to each other,
// and model(1..m) is "apply txn(1) .. txn(m) to an empty Model".
//
// Each transaction holds 1..7 random ops on ~16 objects in two collections
// (write, append, write_full — now and then one large enough to be staged —,
// truncate that shrinks or extends, zero, remove, touch, set/rm xattr, omap
// set/rm/clear/rm_range/header, and occasionally a clone), and ends by setting
// xattr "last" = k (decimal) on a counter object that no other op touches.
// txn(1) first creates the two collections, so the stream must start at 1 on
// an empty store. Content bytes are pseudo-random functions of (seed, k, op),
// so a misplaced or stale byte shows up as a difference.
//
// Threading: the functions are pure; a TxnGenerator may be shared read-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/transaction.h"
#include "store_model.h"

namespace strata::testing {

inline constexpr const char *kCounterCollection = "pg.1";
inline constexpr const char *kCounterObject = "counter";
inline constexpr const char *kLastXattr = "last";

struct GenConfig {
  uint64_t seed = 0x5eed;
  uint32_t objects_per_collection = 8;
  uint64_t max_offset = 64 * 1024;  // writes/zeros start below this
  uint64_t max_small_write = 8 * 1024;
  uint64_t max_truncate = 96 * 1024;
  // Percent of transactions carrying one write_full of [large_min, large_max)
  // bytes (>= the store's stage threshold of 128 KiB).
  uint32_t large_pct = 3;
  uint64_t large_min = 128 * 1024;
  uint64_t large_max = 192 * 1024;
  uint32_t clone_pct = 3;  // percent of ops that are a clone
  uint32_t max_ops = 7;
};

class TxnGenerator {
 public:
  explicit TxnGenerator(GenConfig cfg = {}) : cfg_(cfg) {}

  const GenConfig &config() const { return cfg_; }
  // The two collections the stream uses (txn(1) creates them).
  static std::vector<std::string> collections();
  // Every object name the stream may touch in collection `coll`, except the
  // counter.
  std::vector<std::string> object_names() const;

  store::Transaction txn(uint64_t k) const;

  // Applies txn(from) .. txn(to) to m (which must hold model(1..from-1)).
  Status advance(Model &m, uint64_t from, uint64_t to) const;

 private:
  GenConfig cfg_;
};

// Pseudo-random bytes: a pure function of (key, len).
std::string pattern_bytes(uint64_t key, size_t len);

// splitmix64: small, fast, good enough for test data and choices.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (inclusive).
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  bool percent(uint32_t p) { return next() % 100 < p; }

 private:
  uint64_t s_;
};

}  // namespace strata::testing
