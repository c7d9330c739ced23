// The Env's pieces: the fake clock and the failpoint registry.
#include "common/env.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace strata;
using namespace std::chrono_literals;

namespace {
const std::vector<std::string> kKnown = {"store.apply", "osd.ack"};
}

TEST_CASE("a fake clock moves only when told, steady and wall time together", "[env]") {
  FakeClock clock(1000);
  auto t0 = clock.now();
  CHECK(clock.wall_ms() == 1000);
  CHECK(clock.now() == t0);
  clock.advance(250ms);
  clock.sleep_for(50ms);  // returns at once, the time moved on
  CHECK(clock.now() - t0 == 300ms);
  CHECK(clock.wall_ms() == 1300);
}

TEST_CASE("an Env without a clock of its own runs on the machine's", "[env]") {
  Env env;
  auto before = std::chrono::steady_clock::now();
  CHECK(env.clock().now() >= before);
  CHECK(env.clock().wall_ms() > 1'600'000'000'000ull);  // after 2020
}

TEST_CASE("failpoints fire as armed: errors, subjects, counts, pauses", "[env]") {
  FakeClock clock;
  Env env(clock);
  FailPoints &fp = env.failpoints();
  CHECK(fp.hit("store.apply") == 0);  // nothing armed

  SECTION("an error fires on every hit until disarmed") {
    REQUIRE(fp.arm_from("store.apply=error(ENOSPC)", kKnown).ok());
    CHECK(fp.hit("store.apply") == -ENOSPC);
    CHECK(fp.hit("store.apply", "any object") == -ENOSPC);
    CHECK(fp.hit("osd.ack") == 0);
    fp.disarm("store.apply");
    CHECK(fp.hit("store.apply") == 0);
    CHECK(fp.fired("store.apply") == 2);
  }
  SECTION("a subject limits the point to hits naming it; a count to the first N") {
    REQUIRE(fp.arm_from(" osd.ack@obj-1 = error(5)*2 , store.apply=error(EIO)*1", kKnown).ok());
    CHECK(fp.hit("osd.ack", "obj-2") == 0);
    CHECK(fp.hit("osd.ack", "obj-1") == -EIO);
    CHECK(fp.hit("osd.ack", "obj-1") == -EIO);
    CHECK(fp.hit("osd.ack", "obj-1") == 0);  // two fired, disarmed
    CHECK(fp.hit("store.apply") == -EIO);
    CHECK(fp.hit("store.apply") == 0);
    CHECK(fp.fired("osd.ack") == 2);
  }
  SECTION("a pause waits on the Env's clock and is announced") {
    std::vector<std::string> said;
    fp.set_announce([&](const std::string &line) { said.push_back(line); });
    REQUIRE(fp.arm_from("osd.ack@o=pause(30000)", kKnown).ok());
    auto t0 = clock.now();
    CHECK(fp.hit("osd.ack", "o") == 0);
    CHECK(clock.now() - t0 == 30000ms);  // a fake clock's sleep moves it on
    REQUIRE(said.size() == 1);
    CHECK(said[0] == "failpoint osd.ack (o) fires: pause 30000 ms");
  }
}

TEST_CASE("failpoint specs with an unknown name or action are refused whole", "[env]") {
  FakeClock clock;
  FailPoints fp(clock);
  auto unknown = fp.arm_from("store.apply=error(EIO), store.aply=kill", kKnown);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.message().find("unknown failpoint 'store.aply'") != std::string::npos);
  CHECK(unknown.message().find("store.apply, osd.ack") != std::string::npos);
  CHECK(fp.hit("store.apply") == 0);  // the valid entry before it was not armed either
  CHECK_FALSE(fp.arm_from("store.apply=explode", kKnown).ok());
  CHECK_FALSE(fp.arm_from("store.apply=error(EWHAT)", kKnown).ok());
  CHECK_FALSE(fp.arm_from("store.apply=pause(soon)", kKnown).ok());
  CHECK_FALSE(fp.arm_from("store.apply=kill*0", kKnown).ok());
  CHECK_FALSE(fp.arm_from("store.apply", kKnown).ok());
  CHECK(fp.arm_from("", kKnown).ok());
}

TEST_CASE("a kill failpoint kills its process with SIGKILL", "[env]") {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    Env env;
    if (!env.failpoints().arm_from("osd.ack=kill", kKnown).ok()) ::_exit(3);
    env.failpoints().hit("osd.ack");
    ::_exit(0);  // not reached when the point works
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}
