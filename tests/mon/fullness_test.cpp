// Disk fullness: the ratio evaluation, the map flag's round trip, the
// health lines `strata status` shows, and the store's reserve arithmetic.
#include "cluster/fullness.h"

#include <catch2/catch.hpp>

#include "mon/pg_stats.h"
#include "mon_test_support.h"
#include "store/store_space.h"

using namespace strata;
using namespace strata::cluster;
using mon_test::crush;
using mon_test::sample_map;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

mon::ClusterSummary summary_of(ClusterMap m, const std::map<int32_t, uint64_t> &used_pct) {
  auto v = MapView::create(std::move(m), crush());
  REQUIRE(v.ok());
  mon::PgStatsTable stats;
  for (const auto &[id, pct] : used_pct) {
    mon::OsdStatEntry e;
    e.id = id;
    e.total_bytes = 100 * kGiB;
    e.used_bytes = pct * kGiB;
    stats.update(e);
  }
  return stats.summary(**v);
}

bool has_line(const mon::ClusterSummary &s, const std::string &needle) {
  for (const std::string &w : s.warnings)
    if (w.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("usage is classified against the nearfull, backfillfull and full ratios", "[fullness]") {
  FullRatios r;  // 0.85 / 0.90 / 0.95
  CHECK(classify_usage(84, 100, r) == Fullness::kNone);
  CHECK(classify_usage(85, 100, r) == Fullness::kNearfull);
  CHECK(classify_usage(89, 100, r) == Fullness::kNearfull);
  CHECK(classify_usage(90, 100, r) == Fullness::kBackfillfull);
  CHECK(classify_usage(95, 100, r) == Fullness::kFull);
  CHECK(classify_usage(100, 100, r) == Fullness::kFull);
  CHECK(classify_usage(5, 0, r) == Fullness::kNone);  // total unknown: no judgement

  FullRatios low{0.5, 0.6, 0.7};
  CHECK(classify_usage(55, 100, low) == Fullness::kNearfull);
  CHECK(classify_usage(71, 100, low) == Fullness::kFull);
}

TEST_CASE("a level is left only once usage drops clearly below its ratio", "[fullness]") {
  FullRatios r;  // 0.85 / 0.90 / 0.95; hysteresis 2% of the disk
  CHECK(next_fullness(95, 100, r, Fullness::kNone) == Fullness::kFull);  // up at once
  CHECK(next_fullness(94, 100, r, Fullness::kFull) == Fullness::kFull);
  CHECK(next_fullness(93, 100, r, Fullness::kFull) == Fullness::kFull);
  CHECK(next_fullness(92, 100, r, Fullness::kFull) == Fullness::kBackfillfull);
  CHECK(next_fullness(50, 100, r, Fullness::kFull) == Fullness::kNone);
  CHECK(next_fullness(84, 100, r, Fullness::kNearfull) == Fullness::kNearfull);
  CHECK(next_fullness(82, 100, r, Fullness::kNearfull) == Fullness::kNone);
  CHECK(next_fullness(89, 100, r, Fullness::kNearfull) == Fullness::kNearfull);
}

TEST_CASE("ratios out of order or out of range are refused with the values named", "[fullness]") {
  CHECK(check_ratios(FullRatios{}).ok());
  CHECK(check_ratios(FullRatios{0.9, 0.9, 0.9}).ok());
  Status s = check_ratios(FullRatios{0.95, 0.90, 0.97});
  CHECK(s.code() == -EINVAL);
  CHECK(s.message().find("nearfull") != std::string::npos);
  CHECK_FALSE(check_ratios(FullRatios{0.85, 0.9, 1.5}).ok());
  CHECK_FALSE(check_ratios(FullRatios{0, 0.9, 0.95}).ok());

  CHECK(parse_ratio("k", "0.85").value() == Approx(0.85));
  CHECK(parse_ratio("k", "1").value() == Approx(1.0));
  for (const char *bad : {"", "85%", "0", "1.01", "-0.5", "abc", "0.9x"}) {
    auto v = parse_ratio("mon_osd_full_ratio", bad);
    CHECK_FALSE(v.ok());
    CHECK(v.status().message().find("mon_osd_full_ratio") != std::string::npos);
  }
}

TEST_CASE("the fullness of each OSD travels in the map and its incrementals", "[fullness]") {
  ClusterMap a = sample_map(3, 3);
  ClusterMap b = a;
  b.epoch = a.epoch + 1;
  b.osds[1].fullness = Fullness::kFull;
  b.osds[2].fullness = Fullness::kNearfull;
  auto full = decode_map(encode_map(b));
  REQUIRE(full.ok());
  CHECK(full->osds.at(1).fullness == Fullness::kFull);
  CHECK(full->osds.at(2).fullness == Fullness::kNearfull);
  auto inc = apply_incremental(a, encode_incremental(a, b));
  REQUIRE(inc.ok());
  CHECK(*inc == b);

  CHECK(first_at_least(b, {0, 1, 2}, Fullness::kFull) == 1);
  CHECK(first_at_least(b, {0, 2}, Fullness::kFull) == -1);
  CHECK(first_at_least(b, {0, 2}, Fullness::kNearfull) == 2);
  CHECK(first_at_least(b, {0, 2}, Fullness::kBackfillfull) == -1);
}

TEST_CASE("status warns about nearfull and backfillfull OSDs by name and errs on a full one",
          "[fullness]") {
  ClusterMap m = sample_map(3, 3);
  auto ok = summary_of(m, {{0, 50}, {1, 50}, {2, 50}});
  CHECK_FALSE(has_line(ok, "full osd"));
  CHECK(ok.osds_by_fullness.empty());

  m.osds[2].fullness = Fullness::kNearfull;
  auto near = summary_of(m, {{0, 50}, {1, 50}, {2, 87}});
  CHECK(near.health == "HEALTH_WARN");
  CHECK(has_line(near, "1 nearfull osd(s): osd.2 (87%)"));

  m.osds[1].fullness = Fullness::kBackfillfull;
  auto backfill = summary_of(m, {{0, 50}, {1, 91}, {2, 87}});
  CHECK(backfill.health == "HEALTH_WARN");
  CHECK(has_line(backfill, "1 backfillfull osd(s) take no backfill: osd.1 (91%)"));

  m.osds[0].fullness = Fullness::kFull;
  m.osds[1].fullness = Fullness::kFull;
  auto full = summary_of(m, {{0, 96}, {1, 95}, {2, 87}});
  CHECK(full.health == "HEALTH_ERR");
  CHECK(has_line(full, "2 full osd(s) refuse writes (ENOSPC): osd.0 (96%) osd.1 (95%)"));
  json::Value j = full.to_json();
  REQUIRE(j["fullness"]["full"].as_array().size() == 2);
  CHECK(j["fullness"]["full"].as_array()[0].as_int() == 0);
  CHECK(j["fullness"]["nearfull"].as_array()[0].as_int() == 2);
}

TEST_CASE("a store's reserve refuses what would eat into it, and only that", "[fullness]") {
  store::StoreSpace s{1000 * 100, 0};  // 100,000 bytes; 2% reserve = 2,000
  s.used_bytes = 90'000;
  CHECK(store::fits_outside_reserve(s, 8'000, 2));
  CHECK_FALSE(store::fits_outside_reserve(s, 8'001, 2));
  s.used_bytes = 99'000;  // already inside the reserve: nothing more fits
  CHECK_FALSE(store::fits_outside_reserve(s, 1, 2));
  CHECK(store::fits_outside_reserve(s, 1'000, 0));
  CHECK(store::fits_outside_reserve(store::StoreSpace{0, 5}, 1 << 20, 2));  // unknown total
  CHECK(store::used_ratio(store::StoreSpace{200, 50}) == Approx(0.25));
}
