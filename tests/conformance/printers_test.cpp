// The kit's printers: what a failed CHECK shows for the kit's types.
#include "printers.h"

#include <cerrno>

namespace sc = strata::conformance;
using Catch::Detail::stringify;

TEST_CASE("bytes print escaped, NUL and 0xff as hex, and a long value is cut short") {
  CHECK(sc::printable_bytes(std::string("a\"b\\c\n\t", 7)) == R"("a\"b\\c\n\t")");
  CHECK(sc::printable_bytes(std::string("t\0o\xff", 4)) == R"("t\x00o\xff")");
  CHECK(sc::printable_bytes(std::string(1000, 'x'), 4) == "\"xxxx\"... (1000 bytes)");
}

TEST_CASE("return codes print by errno name and number") {
  CHECK(sc::describe_rc(-ENOENT) == "-ENOENT (-2)");
  CHECK(sc::describe_rc(0) == "0");
  CHECK(sc::describe_rc(1000) == "1000");
  CHECK(sc::describe_rc(-99999) == "-99999");
  CHECK(stringify(sc::Errno(-ENODATA)) == "-ENODATA (-61)");
}

TEST_CASE("the wrappers' containers print their values, never {?}") {
  using KvList = std::vector<std::pair<std::string, std::string>>;
  CHECK(stringify(KvList{{"k1", std::string("\0\xff", 2)}, {"k2", "v"}}) ==
        R"({ { "k1", "\x00\xff" }, { "k2", "v" } })");
  CHECK(stringify(std::optional<std::string>("v")) == R"("v")");
  CHECK(stringify(std::optional<std::string>()) == "nullopt");
  CHECK(stringify(std::make_pair(std::string("a"), std::string("b"))) == R"({ "a", "b" })");
  CHECK(stringify(std::make_pair(uint64_t{7}, std::string("r"))) == R"({ 7, "r" })");
  CHECK(stringify(std::vector<std::string>{"a", "b"}) == R"({ "a", "b" })");
  CHECK(stringify(std::set<std::string>{"b", "a"}) == R"({ "a", "b" })");
  CHECK(stringify(std::vector<std::string>{}) == "{ }");
}

TEST_CASE("long lists stop after a few elements and say how many there were") {
  std::vector<std::vector<int32_t>> placements(1000, std::vector<int32_t>{1, 2});
  std::string s = stringify(placements);
  CHECK(s.find("{ 1, 2 }") != std::string::npos);
  CHECK(s.find("... (1000 in all)") != std::string::npos);
  CHECK(s.size() < 300);
}
