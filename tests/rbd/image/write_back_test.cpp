// WriteBack (image/write_back.h) on its own: the budget of early answers,
// who is answered with what, and the ordering of overlapping requests. No
// cluster: completions are the test's calls to finish().
#include "write_back.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

using strata::rbd::WriteBack;

namespace {

// What a writer was told: -1000 until answered.
struct Answer {
  int rc = -1000;
  int times = 0;
  strata::rbd::Done done() {
    return [this](int r) {
      rc = r;
      ++times;
    };
  }
};

}  // namespace

TEST_CASE("write-back: early answers stay under the budget, in arrival order",
          "[rbd][write_back]") {
  WriteBack wb(20);
  Answer a, b, c, d;
  const uint64_t ta = wb.admit(0, 10, true, a.done());
  const uint64_t tb = wb.admit(10, 10, true, b.done());
  const uint64_t tc = wb.admit(20, 10, true, c.done());
  const uint64_t td = wb.admit(30, 5, true, d.done());
  CHECK(a.rc == 0);
  CHECK(b.rc == 0);
  // c does not fit, and d (which would) is not answered ahead of it.
  CHECK(c.times == 0);
  CHECK(d.times == 0);
  CHECK(wb.answered_bytes() == 20);

  // a lands: c is answered from the freed room, d still does not fit.
  CHECK_FALSE(wb.finish(ta, 0));
  CHECK(c.rc == 0);
  CHECK(d.times == 0);
  // d lands before it was answered: it gets its own result.
  CHECK(wb.finish(td, -5));
  CHECK(d.rc == -5);
  CHECK(d.times == 1);
  // An early-answered write's error reaches nobody here (the image keeps
  // it for the next flush); nothing is answered twice.
  CHECK_FALSE(wb.finish(tb, -5));
  CHECK_FALSE(wb.finish(tc, 0));
  CHECK(a.times == 1);
  CHECK(b.times == 1);
  CHECK(b.rc == 0);
  CHECK(c.times == 1);
  CHECK(wb.answered_bytes() == 0);
  CHECK(wb.in_flight() == 0);
}

TEST_CASE("write-back: a write larger than the budget is answered when nothing else is",
          "[rbd][write_back]") {
  WriteBack wb(8);
  Answer big, next;
  const uint64_t t1 = wb.admit(0, 100, true, big.done());
  CHECK(big.rc == 0);
  const uint64_t t2 = wb.admit(100, 4, true, next.done());
  CHECK(next.times == 0);
  wb.finish(t1, 0);
  CHECK(next.rc == 0);
  wb.finish(t2, 0);
}

TEST_CASE("write-back: writes not to answer early, or a budget of 0, get their own result",
          "[rbd][write_back]") {
  WriteBack through(0);
  CHECK_FALSE(through.enabled());
  Answer a;
  const uint64_t ta = through.admit(0, 10, true, a.done());
  CHECK(a.times == 0);
  CHECK(through.finish(ta, -28));
  CHECK(a.rc == -28);

  WriteBack wb(1 << 20);
  Answer fua;
  const uint64_t tf = wb.admit(0, 10, false, fua.done());
  CHECK(fua.times == 0);
  CHECK(wb.answered_bytes() == 0);
  CHECK(wb.finish(tf, 0));
  CHECK(fua.rc == 0);
  CHECK_FALSE(wb.finish(tf, 0));  // unknown by now: nothing happens
  CHECK(fua.times == 1);
}

TEST_CASE("write-back: overlapping requests wait for the changes admitted before them",
          "[rbd][write_back]") {
  WriteBack wb(1 << 20);
  Answer a, b, c;
  std::vector<std::string> ran;
  const uint64_t ta = wb.admit(0, 10, true, a.done());
  wb.when_ordered(ta, [&] { ran.push_back("a"); });
  const uint64_t tb = wb.admit(5, 10, true, b.done());  // overlaps a
  wb.when_ordered(tb, [&] { ran.push_back("b"); });
  const uint64_t tc = wb.admit(10, 10, true, c.done());  // overlaps b, not a
  wb.when_ordered(tc, [&] { ran.push_back("c"); });
  wb.when_clear(0, 1, [&] { ran.push_back("read a"); });
  wb.when_clear(30, 10, [&] { ran.push_back("read elsewhere"); });
  // Everything answered at once; only what overlaps nothing earlier ran.
  CHECK(a.rc == 0);
  CHECK(b.rc == 0);
  CHECK(c.rc == 0);
  CHECK(ran == std::vector<std::string>{"a", "read elsewhere"});

  wb.finish(ta, 0);
  CHECK(ran == std::vector<std::string>{"a", "read elsewhere", "b", "read a"});
  wb.finish(tb, 0);
  CHECK(ran.back() == "c");
  wb.finish(tc, 0);
  CHECK(ran.size() == 5);

  // A change admitted after a read does not hold the read back.
  Answer d;
  const uint64_t td = wb.admit(0, 10, true, d.done());
  bool read_ran = false;
  wb.when_clear(50, 10, [&] { read_ran = true; });
  CHECK(read_ran);
  wb.finish(td, 0);
}

TEST_CASE("write-back: wait_clear blocks until the overlapping changes land", "[rbd][write_back]") {
  WriteBack wb(1 << 20);
  Answer a;
  const uint64_t ta = wb.admit(100, 10, true, a.done());
  wb.wait_clear(0, 100);  // next to it, not on it: returns at once
  std::atomic<bool> cleared{false};
  std::thread t([&] {
    wb.wait_clear(105, 1);
    cleared = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(cleared);
  wb.finish(ta, 0);
  t.join();
  CHECK(cleared);
}
