#include "backend_workload.h"

#include <random>

namespace strata::conformance {

std::vector<TxnBuilder> mixed_workload(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto below = [&](uint64_t k) { return static_cast<uint64_t>(rng() % k); };
  const char *colls[] = {"w.a", "w.b"};
  std::vector<TxnBuilder> out;
  out.push_back(TxnBuilder().mkcoll("w.a").mkcoll("w.b"));
  for (int t = 1; t < n; ++t) {
    TxnBuilder txn;
    for (int i = 0, ops = 1 + static_cast<int>(below(4)); i < ops; ++i) {
      std::string c = colls[below(2)];
      std::string o = "obj" + std::to_string(below(8));
      switch (below(13)) {
        case 0:
        case 1:
          txn.write(c, o, below(200000), pattern_bytes(1 + below(30000), rng()));
          break;
        case 2:
          txn.write_full(c, o, pattern_bytes(below(5000), rng()));
          break;
        case 3:
          txn.truncate(c, o, below(150000));
          break;
        case 4:
          txn.zero(c, o, below(150000), below(80000));
          break;
        case 5:
          txn.remove(c, o);
          break;
        case 6:
          txn.setxattr(c, o, "x" + std::to_string(below(5)), pattern_bytes(below(100), rng()));
          break;
        case 7:
          txn.rmxattr(c, o, "x" + std::to_string(below(5)));
          break;
        case 8:
          txn.omap_set(c, o, "k" + std::to_string(below(40)), pattern_bytes(below(200), rng()));
          break;
        case 9:
          txn.omap_rm(c, o, "k" + std::to_string(below(40)));
          break;
        case 10:
          txn.omap_rm_range(c, o, "k1", "k3");
          break;
        case 11:
          txn.omap_set_header(c, o, pattern_bytes(below(64), rng()));
          break;
        default: {
          // A short-lived collection, filled in the transaction that makes it.
          std::string tmp = "w.tmp" + std::to_string(below(3));
          if (below(2) == 0)
            txn.mkcoll(tmp)
                .write(tmp, "t", 0, pattern_bytes(100, rng()))
                .omap_set(tmp, "t", "k", "v");
          else
            txn.rmcoll(tmp);
        }
      }
    }
    out.push_back(txn);
  }
  return out;
}

}  // namespace strata::conformance
