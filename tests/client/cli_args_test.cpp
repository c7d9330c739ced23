// Argument parsing of the cluster commands (core/cli/cmd_client_common.h).
#include <catch2/catch.hpp>

#include "cli/cmd_client_common.h"

using namespace strata;
using namespace strata::cli;

TEST_CASE("common options are taken out, in both --flag value and --flag=value forms") {
  ArgList a({"put", "--conf", "/etc/s.conf", "obj", "--name=client.web", "-k", "/k",
             "--set", "client_op_timeout_ms=5", "--set=log_level=debug", "--format", "json",
             "--timeout", "2.5", "file", "--mon-addr", "1.2.3.4:5"});
  auto o = take_common_options(a);
  REQUIRE(o.ok());
  CHECK(o->conf == "/etc/s.conf");
  CHECK(o->name == "client.web");
  CHECK(o->keyring == "/k");
  CHECK(o->mon_addr == "1.2.3.4:5");
  CHECK(o->sets == std::vector<std::string>{"client_op_timeout_ms=5", "log_level=debug"});
  CHECK(o->format == OutputFormat::kJson);
  CHECK(o->timeout_ms == 2500);
  CHECK(o->op_timeout_ms == 2500);  // --timeout bounds each operation too
  CHECK_FALSE(o->help);
  auto pos = a.positional();
  REQUIRE(pos.ok());
  CHECK(*pos == std::vector<std::string>{"put", "obj", "file"});
}

TEST_CASE("the --config spelling works like --conf and -h asks for help") {
  ArgList a({"--config", "x.conf", "-h"});
  auto o = take_common_options(a);
  REQUIRE(o.ok());
  CHECK(o->conf == "x.conf");
  CHECK(o->help);
}

TEST_CASE("bad common options are errors that name the option") {
  ArgList a({"--format", "yaml"});
  CHECK_THAT(take_common_options(a).status().message(), Catch::Contains("yaml"));
  ArgList b({"--conf"});
  CHECK_THAT(take_common_options(b).status().message(), Catch::Contains("--conf needs a value"));
  ArgList c({"--set", "novalue"});
  CHECK_FALSE(take_common_options(c).ok());
  ArgList d({"--timeout", "soon"});
  CHECK_FALSE(take_common_options(d).ok());
  ArgList e({"--timeout", "0"});
  CHECK_FALSE(take_common_options(e).ok());
}

TEST_CASE("without --timeout a command waits 10 s to connect and 30 s for each operation") {
  ArgList a({"stat"});
  auto o = take_common_options(a);
  REQUIRE(o.ok());
  CHECK(o->timeout_ms == 10000);
  CHECK(o->op_timeout_ms == 30000);
}

TEST_CASE("an option nobody takes is reported but - and negative numbers are positional") {
  ArgList a({"obj", "--bogus", "1"});
  auto pos = a.positional();
  REQUIRE_FALSE(pos.ok());
  CHECK_THAT(pos.status().message(), Catch::Contains("--bogus"));
  ArgList b({"obj", "-", "-5"});
  REQUIRE(b.positional().ok());
  CHECK(b.positional()->size() == 3);
}

TEST_CASE("boolean flags are taken wherever they are") {
  ArgList a({"--deep", "1.2f", "--no-cleanup"});
  CHECK(a.take_flag("--no-cleanup"));
  CHECK_FALSE(a.take_flag("--no-cleanup"));
  CHECK(a.take_flag("--deep"));
  CHECK(*a.positional() == std::vector<std::string>{"1.2f"});
}

TEST_CASE("sizes, durations and PG ids parse like the help says") {
  CHECK(*parse_bytes("4K") == 4096);
  CHECK(*parse_bytes("4M") == 4u << 20);
  CHECK(*parse_bytes("1.5K") == 1536);
  CHECK(*parse_bytes("512") == 512);
  CHECK(*parse_bytes("2G") == 2ull << 30);
  CHECK_FALSE(parse_bytes("4X").ok());
  CHECK_FALSE(parse_bytes("0.3").ok());
  CHECK_FALSE(parse_bytes("").ok());

  CHECK(*parse_duration_ms("10") == 10000);
  CHECK(*parse_duration_ms("2.5s") == 2500);
  CHECK(*parse_duration_ms("300ms") == 300);
  CHECK(*parse_duration_ms("1m") == 60000);
  CHECK_FALSE(parse_duration_ms("-1").ok());

  auto pg = parse_pgid("1.2f");
  REQUIRE(pg.ok());
  CHECK(pg->first == 1);
  CHECK(pg->second == 0x2f);
  for (const char *bad : {"1", ".2", "1.", "x.1", "1.zz", ""}) CHECK_FALSE(parse_pgid(bad).ok());
}

TEST_CASE("JSON is pretty-printed on request and left alone when it does not parse") {
  CHECK(pretty_json("{\"a\":[1,2],\"b\":{}}") == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}");
  CHECK(pretty_json("not json") == "not json");
  CHECK(json_quote("a\"b\n") == "\"a\\\"b\\n\"");
}
