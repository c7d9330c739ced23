// Key encoding: composite keys of arbitrary bytes sort like their tuples.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kvdb/key_encoding.h"

using namespace strata::kvdb;
using namespace std::string_literals;

TEST_CASE("encoded components sort like the byte strings they encode", "[kvdb][keys]") {
  std::vector<std::string> names = {""s,   "\0"s,  "\0\0"s, "\0\x01"s,   "\x01"s,
                                    "a"s,  "a\0"s, "a\0b"s, "a\x01"s,    "a\xff"s,
                                    "ab"s, "b"s,   "\xff"s, "\xff\xff"s, "\xff\0"s};
  std::sort(names.begin(), names.end());
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    INFO("between entries " << i << " and " << i + 1);
    CHECK(keys::compose({names[i]}) < keys::compose({names[i + 1]}));
    // The next component must not disturb the order of the first.
    CHECK(keys::compose({names[i], "\xff\xff"}) < keys::compose({names[i + 1], ""}));
  }
}

TEST_CASE("a composed key decodes back into its components", "[kvdb][keys]") {
  std::string key = keys::compose({"coll\0x"s, "obj\xff\0"s});
  keys::append_u64(key, 0x0102030405060708ull);
  key += "raw\0suffix"s;
  std::string_view in = key;
  std::string c, o;
  uint64_t n = 0;
  REQUIRE(keys::next_component(in, c));
  REQUIRE(keys::next_component(in, o));
  REQUIRE(keys::next_u64(in, n));
  CHECK(c == "coll\0x"s);
  CHECK(o == "obj\xff\0"s);
  CHECK(n == 0x0102030405060708ull);
  CHECK(in == "raw\0suffix"s);
}

TEST_CASE("a malformed component is rejected", "[kvdb][keys]") {
  std::string part;
  std::string_view unterminated = "abc";
  CHECK_FALSE(keys::next_component(unterminated, part));
  std::string bad_escape = "a\0\x07"s;
  std::string_view in = bad_escape;
  CHECK_FALSE(keys::next_component(in, part));
}

TEST_CASE("u64 encoding sorts numerically", "[kvdb][keys]") {
  std::vector<uint64_t> values = {0, 1, 255, 256, 65535, 1ull << 32, ~0ull - 1, ~0ull};
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    std::string a, b;
    keys::append_u64(a, values[i]);
    keys::append_u64(b, values[i + 1]);
    CHECK(a < b);
  }
}

TEST_CASE("prefix_end bounds exactly the keys with the prefix", "[kvdb][keys]") {
  CHECK(keys::prefix_end("abc") == "abd");
  CHECK(keys::prefix_end("ab\xff") == "ac");
  CHECK(keys::prefix_end("\xff\xff").empty());
  CHECK(keys::prefix_end("").empty());
  std::string p = keys::compose({"coll"});
  std::string end = keys::prefix_end(p);
  CHECK(p + "\xff\xff\xff" < end);
  CHECK(keys::compose({"coll\x01"}) >= end);
  CHECK(keys::compose({"coll\0"s}) >= end);  // a different collection
}

TEST_CASE("append_printable keeps printable ASCII and escapes the rest, cut at a limit",
          "[kvdb][keys]") {
  std::string out = "key ";
  keys::append_printable(out, "a\\b\0\x7f\xff z"s, 64);
  CHECK(out == "key a\\x5cb\\x00\\x7f\\xff z");
  std::string cut;
  keys::append_printable(cut, "abcdef", 3);
  CHECK(cut == "abc...");
  std::string exact;
  keys::append_printable(exact, "abc", 3);
  CHECK(exact == "abc");
}
