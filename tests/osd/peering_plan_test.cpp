// Peering decisions without a network: given what each OSD reported, which
// log wins and what every acting member must recover.
#include <catch2/catch.hpp>

#include "osd/peering_plan.h"

using namespace strata::osd;

namespace {

LogEntry e(uint64_t epoch, uint64_t v, const std::string &oid, LogOp op = LogOp::kModify) {
  LogEntry x;
  x.version = EVersion{epoch, v};
  x.oid = oid;
  x.op = op;
  x.reqid = ReqId{"client.t.1", v};
  return x;
}

// A report holding `log` (tail = `tail`).
PeerReport report(std::vector<LogEntry> log, EVersion tail = {}, uint64_t les = 1) {
  PeerReport r;
  r.has_pg = true;
  r.log = std::move(log);
  r.info.log_tail = tail;
  r.info.last_update = r.log.empty() ? tail : r.log.back().version;
  r.info.les = les;
  return r;
}

std::vector<LogEntry> range(uint64_t epoch, uint64_t from, uint64_t to) {
  std::vector<LogEntry> out;
  for (uint64_t v = from; v <= to; ++v) out.push_back(e(epoch, v, "o" + std::to_string(v)));
  return out;
}

}  // namespace

TEST_CASE("identical copies peer without recovering anything") {
  auto log = range(1, 1, 5);
  std::map<int32_t, PeerReport> reps{{0, report(log)}, {1, report(log)}, {2, report(log)}};
  PeeringPlan p = plan_peering(0, {0, 1, 2}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  CHECK(p.auth == 0);  // ties go to the primary: nothing to pull
  CHECK(p.last_update == EVersion{1, 5});
  for (int32_t o : {0, 1, 2}) {
    CHECK_FALSE(p.peers[o].backfill);
    CHECK(p.peers[o].missing.empty());
    CHECK(p.peers[o].append.empty());
  }
}

TEST_CASE("a replica that missed writes gets the newer entries and recovers their objects") {
  auto full = range(1, 1, 8);
  auto behind = range(1, 1, 5);
  full.push_back(e(2, 9, "o3", LogOp::kDelete));  // o3 was deleted meanwhile
  std::map<int32_t, PeerReport> reps{{0, report(full)}, {1, report(behind)}, {2, report(full)}};
  PeeringPlan p = plan_peering(0, {0, 1, 2}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  const PeerRecovery &r = p.peers[1];
  CHECK_FALSE(r.backfill);
  CHECK(r.rewind_to == EVersion{1, 5});
  REQUIRE(r.append.size() == 4);
  CHECK(r.append.front().version == EVersion{1, 6});
  REQUIRE(r.missing.size() == 4);
  CHECK(r.missing.at("o6").need == EVersion{1, 6});
  CHECK(r.missing.at("o3").is_delete);
  CHECK(r.missing.at("o3").need == EVersion{2, 9});
}

TEST_CASE("a primary that is behind adopts the newest log and pulls what it lacks") {
  std::map<int32_t, PeerReport> reps{{0, report(range(1, 1, 3))}, {1, report(range(1, 1, 6))},
                                     {2, report(range(1, 1, 6))}};
  PeeringPlan p = plan_peering(0, {0, 1, 2}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  CHECK(p.auth == 1);
  CHECK(p.peers[0].missing.size() == 3);
  CHECK(p.peers[0].append.size() == 3);
  CHECK(p.peers[2].missing.empty());
}

TEST_CASE("divergent writes of an old primary are rolled back and their objects recovered") {
  // The old primary (osd 0) logged 1'6 and 1'7 before its interval ended;
  // the next primary wrote 2'6 and 2'7 to the others.
  auto old = range(1, 1, 5);
  old.push_back(e(1, 6, "lost-a"));
  old.push_back(e(1, 7, "lost-b"));
  auto auth = range(1, 1, 5);
  auth.push_back(e(2, 6, "new-a"));
  auth.push_back(e(2, 7, "new-b"));
  std::map<int32_t, PeerReport> reps{{1, report(auth)}, {2, report(auth)}, {0, report(old)}};
  PeeringPlan p = plan_peering(1, {1, 2, 0}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  CHECK(p.last_update == EVersion{2, 7});
  const PeerRecovery &r = p.peers[0];
  CHECK_FALSE(r.backfill);
  CHECK(r.rewind_to == EVersion{1, 5});
  REQUIRE(r.append.size() == 2);
  CHECK(r.append[0].version == EVersion{2, 6});
  // Its own unacknowledged writes are undone by copying the objects back,
  // and the authoritative writes are fetched.
  CHECK(r.missing.count("lost-a"));
  CHECK(r.missing.count("lost-b"));
  CHECK(r.missing.count("new-a"));
  CHECK(r.missing.count("new-b"));
}

TEST_CASE("the newest log wins even when a stale copy has more entries") {
  auto stale = range(1, 1, 9);
  auto newer = range(1, 1, 4);
  newer.push_back(e(3, 5, "x"));
  std::map<int32_t, PeerReport> reps{{0, report(stale)}, {1, report(newer)}};
  PeeringPlan p = plan_peering(0, {0, 1}, reps, {});
  CHECK(p.auth == 1);
  CHECK(p.peers[0].rewind_to == EVersion{1, 4});
  CHECK(p.peers[0].missing.count("o9"));
  CHECK(p.peers[0].missing.count("x"));
}

TEST_CASE("a copy whose log ends before the authoritative log begins is backfilled") {
  std::map<int32_t, PeerReport> reps{{0, report(range(4, 50, 60), EVersion{4, 49})},
                                     {1, report(range(1, 1, 10))},
                                     {2, report(range(4, 50, 60), EVersion{4, 49})}};
  PeeringPlan p = plan_peering(0, {0, 1, 2}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  CHECK(p.peers[1].backfill);
  CHECK(p.peers[1].append.size() == 11);  // it takes the whole authoritative log
  CHECK_FALSE(p.peers[2].backfill);
}

TEST_CASE("an OSD new to the PG recovers from the log when the log reaches back to the start") {
  PeerReport none;  // has_pg false
  std::map<int32_t, PeerReport> reps{{0, report(range(1, 1, 4))}, {1, report(range(1, 1, 4))}, {3, none}};
  PeeringPlan p = plan_peering(0, {0, 1, 3}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  CHECK_FALSE(p.peers[3].backfill);
  CHECK(p.peers[3].missing.size() == 4);
  // Once the log has been trimmed it must be a backfill.
  std::map<int32_t, PeerReport> trimmed{{0, report(range(1, 5, 8), EVersion{1, 4})}, {3, none}};
  PeeringPlan q = plan_peering(0, {0, 3}, trimmed, {});
  CHECK(q.peers[3].backfill);
}

TEST_CASE("a PG nobody has yet starts empty on the primary") {
  PeerReport none;
  std::map<int32_t, PeerReport> reps{{0, none}, {1, none}};
  PeeringPlan p = plan_peering(0, {0, 1}, reps, {});
  REQUIRE(p.outcome == PeeringPlan::Outcome::kActivate);
  CHECK(p.auth == 0);
  CHECK(p.auth_log.empty());
  CHECK_FALSE(p.peers[1].backfill);
}

TEST_CASE("a PG waits when an interval that may have taken writes has no OSD answering") {
  std::vector<PastInterval> intervals{{5, 9, {3, 4}, 3, true}};
  std::map<int32_t, PeerReport> reps{{0, report(range(1, 1, 4), {}, 2)}};
  PeeringPlan p = plan_peering(0, {0}, reps, intervals);
  CHECK(p.outcome == PeeringPlan::Outcome::kDown);
  // An interval before the last activation is settled.
  reps[0].info.les = 10;
  CHECK(plan_peering(0, {0}, reps, intervals).outcome == PeeringPlan::Outcome::kActivate);
  // An interval too small to accept writes does not block either.
  std::vector<PastInterval> small{{5, 9, {3}, 3, false}};
  reps[0].info.les = 2;
  CHECK(plan_peering(0, {0}, reps, small).outcome == PeeringPlan::Outcome::kActivate);
}

TEST_CASE("unfinished backfills alone cannot make a PG active") {
  PeerReport half = report(range(1, 1, 3));
  half.info.backfill_complete = false;
  std::map<int32_t, PeerReport> reps{{0, half}};
  CHECK(plan_peering(0, {0}, reps, {}).outcome == PeeringPlan::Outcome::kIncomplete);
}

TEST_CASE("the prior set holds the acting set and the up members of recent intervals") {
  std::vector<PastInterval> intervals{{2, 4, {1, 2, 3}, 1, true}, {5, 7, {4, 5}, 4, true},
                                      {8, 9, {6}, 6, false}};
  auto up = [](int32_t o) { return o != 4 && o != 5 && o != 6; };
  PriorSet ps = build_prior_set({0, 1}, intervals, 3, up);
  CHECK(ps.probe == std::set<int32_t>{0, 1, 2, 3});
  REQUIRE(ps.blocked.size() == 1);
  CHECK(ps.blocked[0].first == 5);
  // Intervals ended before the last activation are not asked.
  PriorSet later = build_prior_set({0}, intervals, 5, up);
  CHECK(later.probe == std::set<int32_t>{0});

  std::vector<PastInterval> into{{2, 4, {1}, 1, true}};
  merge_intervals(into, {{0, 1, {9}, 9, false}, {2, 4, {1}, 1, true}});
  REQUIRE(into.size() == 2);
  CHECK(into[0].first == 0);
}
