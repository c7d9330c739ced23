// --format json of the commands that report without a cluster parses and
// carries what the text shows; the plugin path grows, it is not replaced.
#include <catch2/catch.hpp>

#include "cli_run.h"

using cli_test::run_strata;
namespace json = strata::json;

namespace {

json::Value parsed(const cli_test::Outcome &o) {
  INFO("stdout: " << o.out << "\nstderr: " << o.err);
  REQUIRE(o.rc == 0);
  auto v = json::parse(o.out);
  REQUIRE(v.ok());
  return *v;
}

}  // namespace

TEST_CASE("plugins list --format json lists what the text lists") {
  auto j = parsed(run_strata("plugins list --format json"));
  auto text = run_strata("plugins list");
  REQUIRE(j["plugins"].as_array().size() > 0);
  for (const auto &p : j["plugins"].as_array()) {
    CHECK(text.out.find(p["file"].as_string()) != std::string::npos);
    CHECK_FALSE(p["kind"].as_string().empty());
    CHECK_FALSE(p["abi"].as_string().empty());
  }
  // json-pretty is the same document, indented.
  auto pretty = run_strata("plugins list --format json-pretty");
  CHECK(pretty.out.find("\n  \"plugins\": [") != std::string::npos);
  CHECK(json::parse(pretty.out)->dump() == j.dump());
}

TEST_CASE("plugin_path and STRATA_PLUGIN_PATH add directories in front of the built-in ones") {
  auto builtin = parsed(run_strata("plugins list --format json"));
  size_t n = builtin["plugins"].as_array().size();
  std::string conf =
      cli_test::write_file("path.conf", "[global]\nplugin_path = /nonexistent/a:/nonexistent/b\n");
  auto j = parsed(run_strata("plugins list --format json --conf " + conf,
                         "STRATA_PLUGIN_PATH=/nonexistent/env"));
  CHECK(j["plugins"].as_array().size() == n);  // the built-in plugins are still found
  const auto &path = j["search_path"].as_array();
  REQUIRE(path.size() >= 4);
  CHECK(path[0].as_string() == "/nonexistent/a");
  CHECK(path[1].as_string() == "/nonexistent/b");
  CHECK(path[2].as_string() == "/nonexistent/env");
  auto flag = parsed(run_strata("plugins list --format json --plugin-path /nonexistent/flag"));
  CHECK(flag["search_path"].as_array()[0].as_string() == "/nonexistent/flag");
  CHECK(flag["plugins"].as_array().size() == n);
}

TEST_CASE("store fsck and store dump --format json carry the report") {
  std::string dir = cli_test::scratch_dir() + "/store";
  auto mk = run_strata("store mkfs --dir " + dir + " --backend kv --journal none");
  INFO(mk.err);
  REQUIRE(mk.rc == 0);
  auto fsck = parsed(run_strata("store fsck --dir " + dir + " --format json"));
  CHECK(fsck["store"].as_string() == dir);
  CHECK(fsck["backend"].as_string() == "kv");
  CHECK(fsck["journal"].as_string() == "none");
  CHECK(fsck["problems"].as_int(-1) == 0);
  CHECK(fsck["warnings"].is_array());
  auto dump = parsed(run_strata("store dump --dir " + dir + " --format json-pretty"));
  CHECK(dump["backend"].as_string() == "kv");
  CHECK_FALSE(dump["fsid"].as_string().empty());
  CHECK(dump["collections"].is_array());
  auto text = run_strata("store dump --dir " + dir);
  CHECK(text.out.find("fsid " + dump["fsid"].as_string()) != std::string::npos);
}

TEST_CASE("placement test, diff and balance --format json carry the report") {
  std::string a = cli_test::scratch_dir() + "/a.txt", b = cli_test::scratch_dir() + "/b.txt";
  REQUIRE(run_strata("placement build --hosts 4 --devices 2 -o " + a).rc == 0);
  REQUIRE(run_strata("placement build --hosts 5 --devices 2 -o " + b).rc == 0);
  auto t = parsed(
      run_strata("placement test " + a + " --max-x 999 --bench-seconds 0 --format json --show-mappings"));
  CHECK(t["inputs"].as_int() == 1000);
  CHECK(t["devices"].as_array().size() == 8);
  CHECK(t["mappings"].as_array().size() == 1000);
  CHECK(t["replicas_placed"].as_int() == 3000);
  auto text = run_strata("placement test " + a + " --max-x 999 --bench-seconds 0");
  CHECK(text.out.find("failure-domain breaks:  " +
                      std::to_string(t["failure_domain_breaks"].as_int())) != std::string::npos);
  auto d = parsed(run_strata("placement diff " + a + " " + b + " --max-x 999 --format json"));
  CHECK(d["inputs"].as_int() == 1000);
  CHECK(d["replicas_moved"].as_int() > 0);
  CHECK(d["optimal_pct"].as_double() > 0);
  std::string out = cli_test::scratch_dir() + "/bal.txt";
  auto bal = parsed(run_strata("placement balance " + a + " --pg-num 64 -o " + out + " --format json"));
  CHECK(bal["pg_num"].as_int() == 64);
  CHECK(bal["wrote"].as_string() == out);
}

TEST_CASE("strata commands --format json lists every command with what it offers") {
  auto j = parsed(run_strata("commands --format json"));
  REQUIRE(j.as_array().size() > 30);
  for (const auto &c : j.as_array()) {
    CHECK_FALSE(c["command"].as_string().empty());
    CHECK_FALSE(c["summary"].as_string().empty());
  }
}
