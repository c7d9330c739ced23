#include "txn_stream.h"

#include <random>
#include <string>

namespace strata::test {

std::vector<Txn> random_stream(TestStore &store, uint64_t first_seq, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t below) { return static_cast<uint32_t>(rng() % below); };
  bool d_exists = true;
  unsigned salt = seed * 1000;

  std::vector<Txn> stream;
  stream.emplace_back(first_seq);
  stream.back().mkcoll("c").mkcoll("d");
  for (size_t i = 1; i < n; ++i) {
    Txn &t = stream.emplace_back(first_seq + i);
    uint32_t n_ops = 1 + pick(5);
    for (uint32_t j = 0; j < n_ops; ++j) {
      uint32_t kind = pick(20);
      if (kind == 19) {  // collection churn
        if (d_exists)
          t.rmcoll("d");
        else
          t.mkcoll("d");
        d_exists = !d_exists;
        continue;
      }
      bool in_d = d_exists && pick(3) == 0;
      std::string c = in_d ? "d" : "c";
      std::string o = (in_d ? "p" : "o") + std::to_string(pick(in_d ? 2 : 5));
      std::string key = "k" + std::to_string(pick(20));
      switch (kind) {
        case 0:
        case 1:
        case 2:
          t.write(c, o, pick(96 << 10), pattern(1 + pick(20 << 10), ++salt));
          break;
        case 3:
          t.write_full(c, o, pattern(pick(40 << 10), ++salt));
          break;
        case 4:
          t.truncate(c, o, pick(100 << 10));
          break;
        case 5:
          t.zero(c, o, pick(100 << 10), 1 + pick(50 << 10));
          break;
        case 6:
          t.remove(c, o);
          break;
        case 7:
          t.setxattr(c, o, std::string(1, static_cast<char>('a' + pick(3))),
                     pattern(pick(64), ++salt));
          break;
        case 8:
          t.rmxattr(c, o, std::string(1, static_cast<char>('a' + pick(3))));
          break;
        case 9:
        case 10:
          t.omap_set(c, o, key, pattern(pick(100), ++salt));
          break;
        case 11:
          t.omap_rm(c, o, key);
          break;
        case 12:
          t.omap_clear(c, o);
          break;
        case 13:
          t.omap_set_header(c, o, pattern(pick(50), ++salt));
          break;
        case 14: {
          std::string other = "k" + std::to_string(pick(20));
          t.omap_rm_range(c, o, std::min(key, other), std::max(key, other));
          break;
        }
        case 15:
          t.touch(c, o);
          break;
        default: {  // 16..18: staged writes, some large
          std::string data = pattern(1 + pick(kind == 18 ? (1 << 20) : (64 << 10)), ++salt);
          t.write_staged(c, o, store.stage(data), data.size());
          break;
        }
      }
    }
  }
  return stream;
}

}  // namespace strata::test
