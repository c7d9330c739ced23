// `strata up` / `strata down` with the kv backend: a real monitor and three
// real OSD daemons, all PGs active+clean, stopped, started again, purged.
// Compiled only when the OSD daemon (core/cli/cmd_osd.cpp) exists.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/config.h"
#include "mon/daemon_config.h"
#include "common/json.h"
#include "mon/mon_client.h"
#include "mon_test_support.h"

using namespace strata;
using namespace std::chrono_literals;
using mon_test::run_strata;
using mon_test::TempDir;

namespace {

pid_t pid_in(const std::string &file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

bool alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

json::Value status(const std::string &conf) {
  auto cfg = Config::load_file(conf);
  REQUIRE(cfg.ok());
  auto opts = mon::mon_client_options(*cfg, "client.admin");
  REQUIRE(opts.ok());
  mon::MonClient mc(*opts, mon_test::quiet_log());
  REQUIRE(mc.start().ok());
  auto r = mc.command("status");
  REQUIRE(r.ok());
  REQUIRE(r->rc == 0);
  auto j = json::parse(r->json);
  REQUIRE(j.ok());
  return *j;
}

}  // namespace

TEST_CASE("strata up makes a clean kv cluster, down stops it, up starts it again",
          "[up][process]") {
  TempDir d("up");
  std::string dir = d / "cluster", conf = dir + "/strata.conf";
  std::string out;
  int rc = run_strata(
      {"up", "--dir", dir, "--backend", "kv", "--osds", "3", "--pg-num", "8", "--timeout", "120",
       "--set", "heartbeat_interval_ms=100", "--set", "heartbeat_grace_ms=1000"},
      &out);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("every PG is active+clean") != std::string::npos);
  auto s = status(conf);
  CHECK(s["osds"]["up"].as_int() == 3);
  // Pools data, rbd (block images), default.meta and default.data (the
  // filesystem `up` makes), 8 PGs each.
  CHECK(s["pgs"]["total"].as_int() == 32);
  CHECK(s["pgs"]["by_state"]["active+clean"].as_int() == 32);

  pid_t mon = pid_in(dir + "/mon.pid"), osd1 = pid_in(dir + "/osd.1.pid");
  pid_t mds = pid_in(dir + "/mds.a.pid");
  REQUIRE(alive(mon));
  REQUIRE(alive(osd1));
  REQUIRE(alive(mds));
  rc = run_strata({"down", "--dir", dir}, &out);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(mon_test::eventually([&] { return !alive(mon) && !alive(osd1) && !alive(mds); }, 5s));
  CHECK(run_strata({"down", "--dir", dir}) == 0);  // idempotent

  rc = run_strata({"up", "--dir", dir, "--timeout", "120"}, &out);
  INFO(out);
  REQUIRE(rc == 0);
  s = status(conf);
  CHECK(s["osds"]["up"].as_int() == 3);
  CHECK(s["pgs"]["by_state"]["active+clean"].as_int() == 32);
  CHECK(alive(pid_in(dir + "/mds.a.pid")));

  REQUIRE(run_strata({"down", "--dir", dir, "--purge"}) == 0);
  CHECK(!std::filesystem::exists(dir));
  CHECK(run_strata({"down", "--dir", dir}) == 0);
}
