// The omap: a bytewise-sorted key/value map per object, plus a header.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "m";

struct OmapStore : FreshStore {
  OmapStore() { apply(TxnBuilder().mkcoll(kColl)); }
};

// Keys in unsigned bytewise order, with the bytes that trip up C strings and
// signed chars: 0x00 inside and at the start, 0x7f/0x80, 0xff.
KvList ordered_tricky_keys() {
  using std::string;
  return {{string("\0", 1), "v0"},
          {string("\0\x01", 2), "v1"},
          {"A", "v2"},
          {"Z", "v3"},
          {"a", "v4"},
          {string("a\0", 2), "v5"},
          {string("a\0\0", 3), "v6"},
          {"a\x01", "v7"},
          {"a\x7f", "v8"},
          {"a\x80", "v9"},
          {"a\xff", "v10"},
          {"b", "v11"},
          {"\xff", "v12"},
          {"\xff\xff", "v13"}};
}

TEST_CASE("omap keys set in a transaction read back by key", "[backend][omap]") {
  OmapStore s;
  s.apply(TxnBuilder()
              .omap_set(kColl, "o", "k1", "v1")
              .omap_set(kColl, "o", "k2", std::string("\0\xff", 2)));
  CHECK(s.omap_get(kColl, "o", "k1") == "v1");
  CHECK(s.omap_get(kColl, "o", "k2") == std::string("\0\xff", 2));
}

TEST_CASE("omap iteration is in bytewise key order, keys with 0x00 and 0xff bytes included",
          "[backend][omap]") {
  OmapStore s;
  KvList expect = ordered_tricky_keys();
  TxnBuilder t;
  for (auto it = expect.rbegin(); it != expect.rend(); ++it)
    t.omap_set(kColl, "o", it->first, it->second);
  s.apply(t);
  CHECK(s.omap(kColl, "o") == expect);
  for (const auto &[k, v] : expect) CHECK(s.omap_get(kColl, "o", k) == v);
}

TEST_CASE("omap iteration honours start_after, end and limit", "[backend][omap]") {
  OmapStore s;
  KvList all = ordered_tricky_keys();
  TxnBuilder t;
  for (const auto &[k, v] : all) t.omap_set(kColl, "o", k, v);
  s.apply(t);
  auto slice = [&](size_t from, size_t to) { return KvList(all.begin() + from, all.begin() + to); };

  // start_after names a present key: iteration starts right after it.
  CHECK(s.omap(kColl, "o", all[4].first) == slice(5, all.size()));
  // start_after between two keys: "a\0\0" < "a\0\x01" < "a\x01".
  CHECK(s.omap(kColl, "o", std::string("a\0\x01", 3)) == slice(7, all.size()));
  // end is exclusive.
  CHECK(s.omap(kColl, "o", {}, "a") == slice(0, 4));
  CHECK(s.omap(kColl, "o", {}, std::string("a\0", 2)) == slice(0, 5));
  // Both bounds and a limit.
  CHECK(s.omap(kColl, "o", "A", "b", 3) == slice(3, 6));
  CHECK(s.omap(kColl, "o", "A", "b", 0) == slice(3, 11));
  CHECK(s.omap(kColl, "o", {}, {}, 1) == slice(0, 1));
  // Empty ranges.
  CHECK(s.omap(kColl, "o", "\xff\xff").empty());
  CHECK(s.omap(kColl, "o", "b", "b").empty());
  CHECK(s.omap(kColl, "o", "z", "a").empty());
}

TEST_CASE("paging through 5,000 omap keys with start_after visits each key once",
          "[backend][omap]") {
  OmapStore s;
  TxnBuilder t;
  for (int i = 0; i < 5000; ++i)
    t.omap_set(kColl, "o", "key." + std::to_string(100000 + i * 7), std::to_string(i));
  s.apply(t);
  KvList all;
  std::string cursor;
  for (;;) {
    KvList page = s.omap(kColl, "o", cursor, {}, 333);
    REQUIRE(page.size() <= 333);
    all.insert(all.end(), page.begin(), page.end());
    if (page.size() < 333) break;
    cursor = page.back().first;
  }
  REQUIRE(all.size() == 5000);
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(all[i].first == "key." + std::to_string(100000 + i * 7));
    REQUIRE(all[i].second == std::to_string(i));
  }
}

TEST_CASE("omap_rm removes one key and omap_clear removes all keys but keeps the header",
          "[backend][omap]") {
  OmapStore s;
  s.apply(TxnBuilder()
              .omap_set(kColl, "o", "a", "1")
              .omap_set(kColl, "o", "b", "2")
              .omap_set(kColl, "o", "c", "3")
              .omap_set_header(kColl, "o", "header"));
  s.apply(TxnBuilder().omap_rm(kColl, "o", "b").omap_rm(kColl, "o", "never"));
  CHECK(s.omap(kColl, "o") == KvList{{"a", "1"}, {"c", "3"}});
  s.apply(TxnBuilder().omap_clear(kColl, "o"));
  CHECK(s.omap(kColl, "o").empty());
  CHECK(s.omap_header(kColl, "o") == "header");
  CHECK(s.exists(kColl, "o"));
}

TEST_CASE("omap_rm_range removes keys from first up to but excluding end", "[backend][omap]") {
  OmapStore s;
  TxnBuilder t;
  for (const char *k : {"a", "b", "ba", "bz", "c", "d"}) t.omap_set(kColl, "o", k, k);
  s.apply(t);
  s.apply(TxnBuilder().omap_rm_range(kColl, "o", "b", "c"));
  CHECK(s.omap(kColl, "o") == KvList{{"a", "a"}, {"c", "c"}, {"d", "d"}});
  s.apply(TxnBuilder().omap_rm_range(kColl, "o", "c", "c"));  // empty range
  CHECK(s.omap(kColl, "o").size() == 3);
  s.apply(TxnBuilder().omap_rm_range(kColl, "o", "0", "\xff"));
  CHECK(s.omap(kColl, "o").empty());
}

TEST_CASE("the omap header is its own value, empty until set", "[backend][omap]") {
  OmapStore s;
  s.apply(TxnBuilder().touch(kColl, "o"));
  CHECK(s.omap_header(kColl, "o") == "");
  CHECK(s.omap_header_rc(kColl, "o", nullptr, 0) == 0);
  std::string header = pattern_bytes(3000, 5);
  s.apply(TxnBuilder().omap_set_header(kColl, "o", header).omap_set(kColl, "o", "k", "v"));
  CHECK(s.omap_header(kColl, "o") == header);
  CHECK(s.omap(kColl, "o") == KvList{{"k", "v"}});
  s.apply(TxnBuilder().omap_set_header(kColl, "o", "short"));
  CHECK(s.omap_header(kColl, "o") == "short");
}

TEST_CASE("a missing omap key answers ENODATA and a missing object ENOENT", "[backend][omap]") {
  OmapStore s;
  s.apply(TxnBuilder().omap_set(kColl, "o", "k", "v"));
  char buf[8];
  CHECK(Errno(s.omap_get_rc(kColl, "o", "absent", buf, sizeof buf)) == Errno(-ENODATA));
  CHECK(Errno(s.omap_get_rc(kColl, "missing", "k", buf, sizeof buf)) == Errno(-ENOENT));
  CHECK(Errno(s.omap_header_rc(kColl, "missing", buf, sizeof buf)) == Errno(-ENOENT));
  CHECK(Errno(s.omap_rc(kColl, "missing", {}, {}, 0)) == Errno(-ENOENT));
}

TEST_CASE("omap values and the header use the too-small-buffer convention of xattrs",
          "[backend][omap]") {
  OmapStore s;
  std::string value = pattern_bytes(500, 6);
  s.apply(TxnBuilder().omap_set(kColl, "o", "k", value).omap_set_header(kColl, "o", value));
  std::string small(499, '#');
  CHECK(s.omap_get_rc(kColl, "o", "k", small.data(), small.size()) == 500);
  CHECK(small == std::string(499, '#'));
  CHECK(s.omap_header_rc(kColl, "o", small.data(), small.size()) == 500);
  CHECK(small == std::string(499, '#'));
  CHECK(s.omap_get_rc(kColl, "o", "k", nullptr, 0) == 500);
}

TEST_CASE("omap values may be empty or as large as 256 KiB", "[backend][omap]") {
  OmapStore s;
  std::string big = pattern_bytes(256 * 1024, 7);
  s.apply(TxnBuilder().omap_set(kColl, "o", "empty", "").omap_set(kColl, "o", "big", big));
  CHECK(s.omap_get(kColl, "o", "empty") == "");
  CHECK(s.omap_get(kColl, "o", "big") == big);
  CHECK(s.omap(kColl, "o").size() == 2);
}

TEST_CASE("omaps of different objects do not mix", "[backend][omap]") {
  OmapStore s;
  s.apply(TxnBuilder()
              .omap_set(kColl, "a", "k", "a's")
              .omap_set(kColl, "b", "k", "b's")
              .omap_set(kColl, "ab", "k", "ab's"));
  s.apply(TxnBuilder().omap_clear(kColl, "a"));
  CHECK(s.omap(kColl, "a").empty());
  CHECK(s.omap(kColl, "b") == KvList{{"k", "b's"}});
  CHECK(s.omap(kColl, "ab") == KvList{{"k", "ab's"}});
}

int stop_after_three(void *ctx, strata_slice, strata_slice) {
  int &seen = *static_cast<int *>(ctx);
  return ++seen == 3 ? 1 : 0;
}

TEST_CASE("omap iteration stops when the visitor asks it to", "[backend][omap]") {
  OmapStore s;
  TxnBuilder t;
  for (int i = 0; i < 10; ++i) t.omap_set(kColl, "o", "k" + std::to_string(i), "v");
  s.apply(t);
  int seen = 0;
  strata_err err{};
  int rc = backend_ops().omap_iterate(s.handle(), {kColl, std::strlen(kColl)}, {"o", 1}, {"", 0},
                                      {"", 0}, 0, stop_after_three, &seen, &err);
  // ABI 1.3 (plugin.h, "Visitors"): the stop value comes back; 0 before.
  CHECK(Errno(rc) == Errno(descriptor().abi_minor >= 3 ? 1 : 0));
  CHECK(seen == 3);
}

}  // namespace
