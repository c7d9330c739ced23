// The per-address limit on log lines that unauthenticated peers cause.
#include "msg/peer_log_limiter.h"

#include <catch2/catch.hpp>

using strata::msg::PeerLogLimiter;
using namespace std::chrono_literals;

namespace {
const PeerLogLimiter::Clock::time_point t0{};
}

TEST_CASE("the first line from an address is logged, then at most one per interval") {
  PeerLogLimiter lim(10s);
  CHECK(lim.admit("10.0.0.1:40000", t0).log);
  for (int i = 1; i <= 99; ++i)
    CHECK_FALSE(lim.admit("10.0.0.1:4000" + std::to_string(i), t0 + 1ms * i).log);
  auto d = lim.admit("10.0.0.1:50000", t0 + 10s);
  CHECK(d.log);
  CHECK(d.suppressed == 99);
  CHECK(lim.suffix(d) ==
        " (99 more like it from 10.0.0.1 suppressed; at most one line per 10 s "
        "per address)");
  // The count starts again after a line is logged.
  CHECK_FALSE(lim.admit("10.0.0.1:50001", t0 + 11s).log);
  auto d2 = lim.admit("10.0.0.1:50002", t0 + 20s);
  CHECK(d2.log);
  CHECK(d2.suppressed == 1);
}

TEST_CASE("addresses are limited independently of each other and of their ports") {
  PeerLogLimiter lim(1s);
  CHECK(lim.admit("10.0.0.1:1", t0).log);
  CHECK(lim.admit("10.0.0.2:1", t0).log);
  CHECK(lim.admit("[::1]:7", t0).log);
  CHECK_FALSE(lim.admit("10.0.0.1:2", t0).log);
  CHECK_FALSE(lim.admit("[::1]:8", t0).log);
  CHECK(lim.tracked() == 3);
}

TEST_CASE("a line with nothing suppressed gets no suffix") {
  PeerLogLimiter lim(500ms);
  auto d = lim.admit("192.168.1.9:22", t0);
  CHECK(d.log);
  CHECK(lim.suffix(d).empty());
  auto later = lim.admit("192.168.1.9:23", t0 + 1s);
  CHECK(later.log);
  CHECK(lim.suffix(later).empty());
}

TEST_CASE("the host of an address is taken without its port") {
  CHECK(PeerLogLimiter::host_of("10.1.2.3:6800") == "10.1.2.3");
  CHECK(PeerLogLimiter::host_of("[fe80::1]:6800") == "fe80::1");
  CHECK(PeerLogLimiter::host_of("fe80::1") == "fe80::1");
  CHECK(PeerLogLimiter::host_of("somehost") == "somehost");
}

TEST_CASE("many distinct addresses cannot grow the table past its bound") {
  PeerLogLimiter lim(10s, 8);
  int logged = 0;
  for (int i = 0; i < 1000; ++i)
    logged += lim.admit("10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ":1",
                        t0 + 1ms * i)
                  .log;
  // 8 addresses and the bucket the others share.
  CHECK(lim.tracked() <= 9);
  // 8 addresses got their first line; the other 992 one "other peers" line.
  CHECK(logged == 9);
  auto d = lim.admit("10.9.9.9:1", t0 + 11s);
  CHECK(d.log);
  // Past the interval the old entries are forgotten and room frees up.
  CHECK(d.key == "10.9.9.9");
}
