// Object -> PG: stable across runs, spread evenly, and growing pg_num only
// moves objects from the PG being split into the new one.
#include <map>
#include <set>

#include "placement/pg.h"
#include "placement_test_support.h"

using namespace placement_test;

TEST_CASE("object names hash to PGs with a pinned, even spread") {
  CHECK(object_hash("") == 0xef46db3751d8e999ull);  // XXH64 of nothing, seed 0
  std::map<uint32_t, int> per_pg;
  for (int i = 0; i < 64000; ++i) ++per_pg[object_to_pg("obj." + std::to_string(i), 64)];
  CHECK(per_pg.size() == 64);
  for (const auto &[pg, n] : per_pg) CHECK(std::abs(n - 1000) < 150);
}

TEST_CASE("growing pg_num by one only moves objects into the new PG from its parent") {
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 4000; ++i) hashes.push_back(object_hash("rbd_data." + std::to_string(i)));
  for (uint32_t n = 1; n < 300; ++n) {
    uint32_t high = 1;
    while (high * 2 <= n) high *= 2;
    uint32_t parent = n - high;  // the PG that splits when PG n appears
    for (uint64_t h : hashes) {
      uint32_t before = stable_mod(h, n), after = stable_mod(h, n + 1);
      REQUIRE(before < n);
      REQUIRE(after < n + 1);
      if (before != after) {
        INFO("pg_num " << n << " -> " << n + 1);
        REQUIRE(after == n);
        REQUIRE(before == parent);
      }
    }
  }
}

TEST_CASE("PGs of different pools get different placement inputs") {
  std::set<uint32_t> inputs;
  for (uint32_t pool = 1; pool <= 4; ++pool)
    for (uint32_t seed = 0; seed < 1000; ++seed) inputs.insert(pg_input({pool, seed}));
  CHECK(inputs.size() == 4000);
  CHECK(pg_input({1, 0}) == pg_input({1, 0}));
}
