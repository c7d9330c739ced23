// usage() and fsck(): the numbers `strata store` reports.
#include <catch2/catch.hpp>

#include "backend_workload.h"
#include "kit.h"

namespace {
using namespace strata::conformance;

TEST_CASE("usage reports a total no smaller than what is used", "[backend][health]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, pattern_bytes(1 << 20, 51)));
  strata_store_usage u = s.usage();
  CHECK(u.struct_size > 0);
  CHECK(u.struct_size <= sizeof(strata_store_usage));
  CHECK(u.total_bytes > 0);
  CHECK(u.used_bytes <= u.total_bytes);
}

TEST_CASE("usage counts objects exactly, unless it says it cannot", "[backend][health]") {
  FreshStore s;
  TxnBuilder t;
  t.mkcoll("c1").mkcoll("c2");
  for (int i = 0; i < 10; ++i) t.touch(i < 6 ? "c1" : "c2", "o" + std::to_string(i));
  s.apply(t);
  if (s.usage().n_objects == UINT64_MAX) {
    SUCCEED("the store does not count objects (n_objects = UINT64_MAX)");
    return;
  }
  CHECK(s.usage().n_objects == 10);
  s.apply(TxnBuilder().remove("c1", "o0").remove("c1", "o1").rmcoll("c2"));
  CHECK(s.usage().n_objects == 4);
}

TEST_CASE("fsck finds no problems in a fresh store", "[backend][health]") {
  FreshStore s;
  CHECK(s.fsck() == 0);
}

TEST_CASE("fsck finds no problems after a mixed workload, a checkpoint and a reopen",
          "[backend][health]") {
  FreshStore s;
  std::vector<TxnBuilder> txns = mixed_workload(60, 52);
  for (const TxnBuilder &t : txns) s.apply(t);
  CHECK(s.fsck() == 0);
  s.checkpoint();
  CHECK(s.fsck() == 0);
  s.reopen();
  CHECK(s.fsck() == 0);
}

}  // namespace
