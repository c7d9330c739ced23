// The monitor's rules for believing down reports and holding flapping OSDs
// down (mon/osd_failure_policy.h), on maps built like the monitor's.
#include <catch2/catch.hpp>

#include "mon/osd_failure_policy.h"
#include "mon_test_support.h"

using namespace strata;
using namespace strata::mon;
using mon_test::sample_map;

namespace {

bool believed(const cluster::ClusterMap &m, int32_t target, std::set<int32_t> reporters,
              FailurePolicyOptions o = {}) {
  ReporterVerdict v = judge_reporters(m, target, reporters, o);
  INFO(v.why);
  return v.enough;
}

}  // namespace

TEST_CASE("one host cut off from its peers cannot get the healthy OSDs marked down",
          "[failure_policy]") {
  auto m = sample_map(3, 3);  // osd.i alone on host<i>
  // The isolated osd.2 reports both others: one domain, two needed.
  CHECK_FALSE(believed(m, 0, {2}));
  CHECK_FALSE(believed(m, 1, {2}));
  // The majority reports osd.2 from two hosts: believed.
  CHECK(believed(m, 2, {0, 1}));
  CHECK_FALSE(believed(m, 2, {0}));
}

TEST_CASE("two reporters on the same host count as one failure domain", "[failure_policy]") {
  auto m = sample_map(4, 2);  // host0: osd.0, osd.2; host1: osd.1, osd.3
  CHECK_FALSE(believed(m, 1, {0, 2}));
  CHECK(believed(m, 1, {0, 3}));
  CHECK(failure_domains(m, "host")[0] == failure_domains(m, "host")[2]);
  CHECK(failure_domains(m, "host")[0] != failure_domains(m, "host")[1]);
}

TEST_CASE("with every OSD on one host, two distinct OSDs must report", "[failure_policy]") {
  auto m = sample_map(3, 1);
  CHECK_FALSE(believed(m, 2, {0}));
  CHECK(believed(m, 2, {0, 1}));
  // Reporting itself or repeating a report adds nothing.
  CHECK_FALSE(believed(m, 2, {2, 0}));
}

TEST_CASE("a two-OSD cluster believes the one peer that can report", "[failure_policy]") {
  auto m = sample_map(2, 1);
  CHECK(believed(m, 1, {0}));
}

TEST_CASE("reporters that are down do not count, and the OSDs left decide", "[failure_policy]") {
  auto m = sample_map(3, 3);
  m.osds[1].up = false;
  // Only osd.0 can still report osd.2: its report is enough.
  CHECK(believed(m, 2, {0, 1}));
  CHECK_FALSE(believed(m, 2, {1}));
}

TEST_CASE("the reporter level osd counts every OSD as its own domain", "[failure_policy]") {
  auto m = sample_map(3, 1);
  FailurePolicyOptions o;
  o.reporter_level = "osd";
  CHECK_FALSE(believed(m, 2, {0}, o));
  CHECK(believed(m, 2, {0, 1}, o));
  o.min_down_reporters = 1;
  CHECK(believed(m, 2, {0}, o));
}

TEST_CASE("an OSD marked down five times within the window is held down", "[failure_policy]") {
  FailurePolicyOptions o;
  o.flap_max_markdowns = 5;
  o.flap_window_ms = 600000;
  o.flap_hold_ms = 600000;
  FlapGuard g(o);
  for (uint64_t i = 0; i < 4; ++i) CHECK_FALSE(g.on_markdown(2, 1000 + i * 2000));
  CHECK_FALSE(g.held(2, 9000));
  CHECK(g.on_markdown(2, 9000));
  CHECK(g.held(2, 9001));
  CHECK(g.holds().at(2).markdowns == 5);
  CHECK_FALSE(g.held(1, 9001));
  // Still held just before the hold ends; let go after it.
  CHECK(g.held(2, 9000 + 600000 - 1));
  bool expired = false;
  CHECK_FALSE(g.held(2, 9000 + 600000, &expired));
  CHECK(expired);
}

TEST_CASE("markdowns spread wider than the window never hold an OSD", "[failure_policy]") {
  FailurePolicyOptions o;
  o.flap_max_markdowns = 3;
  o.flap_window_ms = 10000;
  FlapGuard g(o);
  for (uint64_t i = 0; i < 20; ++i) CHECK_FALSE(g.on_markdown(0, i * 6000));
  CHECK(g.holds().empty());
}

TEST_CASE("an operator release lifts a hold that would otherwise last", "[failure_policy]") {
  FailurePolicyOptions o;
  o.flap_max_markdowns = 2;
  o.flap_hold_ms = 0;  // only the operator lets it back
  FlapGuard g(o);
  g.on_markdown(3, 10);
  CHECK(g.on_markdown(3, 20));
  CHECK(g.held(3, 1000ull * 3600 * 24 * 365));
  CHECK(g.release(3));
  CHECK_FALSE(g.held(3, 30));
  CHECK_FALSE(g.release(3));
  // The history went with the hold: one more markdown does not hold it.
  CHECK_FALSE(g.on_markdown(3, 40));
}

TEST_CASE("holds survive their text form (a monitor restart)", "[failure_policy]") {
  FailurePolicyOptions o;
  o.flap_max_markdowns = 1;
  FlapGuard g(o);
  g.on_markdown(4, 111);
  g.on_markdown(7, 222);
  FlapGuard r(o);
  r.restore_holds(g.encode_holds());
  REQUIRE(r.holds().size() == 2);
  CHECK(r.holds().at(4).since_ms == 111);
  CHECK(r.holds().at(7).markdowns == 1);
  r.restore_holds("");
  CHECK(r.holds().empty());
}
