// ExtentMap against a byte-per-byte model: random inserts, erases and
// truncates, then every read (overlay, covers, slice) agrees.
#include "data_extents.h"

#include <catch2/catch.hpp>
#include <random>

#include "data_objects.h"

using strata::fuse::ExtentMap;

namespace {
constexpr size_t kSpan = 4096;
constexpr char kHole = 0;  // model byte for "not held"; data bytes are never 0
}  // namespace

TEST_CASE("data: the extent map matches a byte model under random inserts and erases",
          "[fuse][data]") {
  std::mt19937 rng(12);
  ExtentMap m;
  std::string model(kSpan, kHole);
  for (int i = 0; i < 5000; ++i) {
    const size_t off = rng() % kSpan;
    const size_t len = 1 + rng() % std::min<size_t>(300, kSpan - off);
    const int what = rng() % 10;
    if (what < 6) {
      std::string data(len, static_cast<char>('a' + i % 26));
      m.insert(off, data.data(), len);
      model.replace(off, len, data);
    } else if (what < 9) {
      m.erase(off, len);
      std::fill(model.begin() + off, model.begin() + off + len, kHole);
    } else if (rng() % 2) {
      m.truncate(off);
      std::fill(model.begin() + off, model.end(), kHole);
    } else {
      // The read-ahead cache's bound: the lowest bytes go first.
      size_t held = kSpan - std::count(model.begin(), model.end(), kHole);
      const size_t target = held / 2;
      m.shrink_to(target);
      for (size_t k = 0; k < kSpan && held > target; ++k)
        if (model[k] != kHole) {
          model[k] = kHole;
          --held;
        }
    }
    size_t held = 0;
    for (char c : model) held += c != kHole;
    REQUIRE(m.bytes() == held);
    // No two extents touch (they would have been merged).
    uint64_t prev_end = 0;
    bool first = true;
    for (const auto &[o, d] : m.extents()) {
      REQUIRE(!d.empty());
      if (!first) REQUIRE(o > prev_end);
      prev_end = o + d.size();
      first = false;
    }
    const size_t roff = rng() % kSpan;
    const size_t rlen = 1 + rng() % (kSpan - roff);
    std::string out(rlen, kHole);
    m.overlay(roff, rlen, out.data());
    REQUIRE(out == model.substr(roff, rlen));
    REQUIRE(m.covers(roff, rlen) == (model.substr(roff, rlen).find(kHole) == std::string::npos));
    ExtentMap s = m.slice(roff, rlen);
    std::string out2(rlen, kHole);
    s.overlay(roff, rlen, out2.data());
    REQUIRE(out2 == out);
  }
}

TEST_CASE("data: object names and the split of a range over objects", "[fuse][data]") {
  CHECK(strata::fuse::data_object_name(0x1234, 5) == "0000000000001234.00000005");
  auto p = strata::fuse::split_by_object(100, 300, 128);
  REQUIRE(p.size() == 4);
  CHECK((p[0].objno == 0 && p[0].obj_off == 100 && p[0].len == 28));
  CHECK((p[1].objno == 1 && p[1].obj_off == 0 && p[1].len == 128));
  CHECK((p[2].objno == 2 && p[2].obj_off == 0 && p[2].len == 128 && p[2].file_off == 256));
  CHECK((p[3].objno == 3 && p[3].obj_off == 0 && p[3].len == 16 && p[3].file_off == 384));
  CHECK(strata::fuse::objects_for(0, 128) == 0);
  CHECK(strata::fuse::objects_for(128, 128) == 1);
  CHECK(strata::fuse::objects_for(129, 128) == 2);
}
