#include "bench/store/payload.h"

#include <cstring>
#include <random>

namespace strata::store_bench {

namespace {

// 8 MiB so that successive 4 MiB payloads start at different offsets.
const std::string &random_pool() {
  static const std::string pool = [] {
    std::string p(8 << 20, '\0');
    std::mt19937_64 rng(0x5742a7a);
    for (size_t i = 0; i + 8 <= p.size(); i += 8) {
      uint64_t v = rng();
      std::memcpy(&p[i], &v, 8);
    }
    return p;
  }();
  return pool;
}

}  // namespace

std::string_view payload(uint64_t i, uint64_t len) {
  const std::string &pool = random_pool();
  uint64_t span = pool.size() - len + 1;
  return std::string_view(pool).substr((i * k4K) % span, len);
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string object_name(const char *prefix, uint64_t i) { return prefix + std::to_string(i); }

}  // namespace strata::store_bench
