// The order-keeping part between the messenger and the PGs: ConnOrder (a
// connection's messages reach their PGs in arrival order even when some are
// staged first). The shard's use of WorkQueue is in shard_test.cpp.
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "osd/conn_order.h"

using namespace strata::osd;

namespace {

struct Log {
  std::mutex mu;
  std::vector<int> seen;
  void add(int v) {
    std::lock_guard lk(mu);
    seen.push_back(v);
  }
  std::vector<int> get() {
    std::lock_guard lk(mu);
    return seen;
  }
};

}  // namespace

TEST_CASE(
    "a connection's messages wait for one being prepared ahead of them, other connections do not") {
  ConnOrder order;
  Log log;
  int a = 0, b = 0;                   // two connections (only their addresses matter)
  uint64_t slot = order.reserve(&a);  // message 0 of a, being staged
  order.deliver(&a, [&] { log.add(1); });
  order.deliver(&a, [&] { log.add(2); });
  order.deliver(&b, [&] { log.add(100); });  // another connection: at once
  CHECK(log.get() == std::vector<int>{100});
  CHECK(order.connections_waiting() == 1);
  order.fill(&a, slot, [&] { log.add(0); });
  CHECK(log.get() == std::vector<int>{100, 0, 1, 2});
  CHECK(order.connections_waiting() == 0);
  order.deliver(&a, [&] { log.add(3); });  // nothing pending: delivered at once
  CHECK(log.get().back() == 3);
}

TEST_CASE("places filled out of order by several threads are delivered in reserved order") {
  ConnOrder order;
  Log log;
  int conn = 0;
  constexpr int kN = 400;
  std::vector<uint64_t> slots;
  for (int i = 0; i < kN; ++i) slots.push_back(order.reserve(&conn));
  std::vector<std::thread> fillers;
  for (int t = 0; t < 4; ++t)
    fillers.emplace_back([&, t] {
      // Each thread fills every fourth place, from the back: the head
      // places come last, so most deliveries queue behind them.
      for (int i = kN - 1 - t; i >= 0; i -= 4) order.fill(&conn, slots[i], [&, i] { log.add(i); });
    });
  for (auto &t : fillers) t.join();
  std::vector<int> want(kN);
  for (int i = 0; i < kN; ++i) want[i] = i;
  CHECK(log.get() == want);
  CHECK(order.connections_waiting() == 0);
}
