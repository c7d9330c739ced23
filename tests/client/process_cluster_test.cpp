// The client against real daemons: `strata up` starts a monitor and three
// `strata osd` processes (kv backend, tmpfs journal) on 127.0.0.1. The
// whole C API (api_cases.cpp), the CLI, and what happens to the client's
// requests when an OSD is frozen and then killed.
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "api_cases.h"
#include "client/c_api_internal.h"
#include "fake_cluster.h"
#include "common/json.h"
#include "process_cluster.h"

using namespace clienttest;
using strata::testing::ProcessCluster;

namespace {

// One cluster for the API and CLI sections (they use their own pools and
// object names), made on first use.
ProcessCluster &shared_cluster() {
  static ProcessCluster cluster(3);
  return cluster;
}

void make_pool(strata_cluster_t c, const std::string &name, uint32_t size, uint32_t min_size) {
  strata_pool_args a{};
  a.struct_size = sizeof a;
  a.size = size;
  a.min_size = min_size;
  a.pg_num = 8;
  int rc = strata_pool_create(c, name.c_str(), &a);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
}

std::string content_of(int i) { return "object " + std::to_string(i) + std::string(100, char('a' + i % 26)); }

// Every PG active+clean, per the monitor's status.
// kill(SIGSTOP) returns before every thread of the process has stopped; an
// OSD that answers on the thread that read the message could still serve a
// request sent right after. True once every thread shows state T.
bool wait_stopped(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    bool all = true;
    std::error_code ec;
    for (const auto &t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
      std::ifstream f(t.path() / "stat");
      std::string line;
      std::getline(f, line);
      auto close = line.rfind(')');
      char state = close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
      if (state != 'T' && state != 't') all = false;
    }
    if (all && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool all_clean(strata_cluster_t c) {
  char *json = nullptr;
  if (strata_mon_command(c, "status", nullptr, 0, nullptr, nullptr, &json, nullptr) < 0) return false;
  auto v = strata::json::parse(json);
  strata_buffer_free(json);
  if (!v.ok()) return false;
  const auto &pgs = (*v)["pgs"];
  int64_t total = pgs["total"].as_int(-1);
  return total > 0 && pgs["by_state"]["active+clean"].as_int(0) == total;
}

int up_osds(strata_cluster_t c) {
  char *json = nullptr;
  if (strata_mon_command(c, "status", nullptr, 0, nullptr, nullptr, &json, nullptr) < 0) return -1;
  std::string j = json;
  strata_buffer_free(json);
  size_t p = j.find("\"up\":");
  return p == std::string::npos ? -1 : std::atoi(j.c_str() + p + 5);
}

}  // namespace

TEST_CASE("real cluster: the whole C API against strata mon and three strata osd processes") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  strata_cluster_t c = pc.connect();
  if (strata_pool_lookup(c, "api") == -ENOENT) make_pool(c, "api", 3, 2);
  ApiEnv env{c, "api"};
#define STRATA_PROCESS_SECTION(name, text) \
  SECTION(text) { api_case_##name(env); }
  STRATA_CLIENT_API_CASES(STRATA_PROCESS_SECTION)
#undef STRATA_PROCESS_SECTION
  strata_cluster_shutdown(c);
}

TEST_CASE("real cluster: the strata CLI") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  std::string out;
  REQUIRE(pc.cli("status --format json", &out) == 0);
  CHECK_THAT(out, Catch::Contains("\"health\""));
  REQUIRE(pc.cli("status", &out) == 0);
  CHECK_THAT(out, Catch::Contains("3 up"));
  REQUIRE(pc.cli("osd tree", &out) == 0);
  CHECK_THAT(out, Catch::Contains("osd.2"));
  REQUIRE(pc.cli("pool create clitest --size 2 --min-size 1 --pg-num 4", &out) == 0);
  REQUIRE(pc.cli("pool get clitest --format json", &out) == 0);
  CHECK_THAT(out, Catch::Contains("\"size\":2"));
  REQUIRE(pc.cli("pool set clitest size 3", &out) == 0);
  REQUIRE(pc.cli("pool ls --format json-pretty", &out) == 0);
  CHECK_THAT(out, Catch::Contains("clitest"));

  // put/get stream in 4 MiB operations: 9 MiB takes three.
  std::string in = pc.dir() + "/in.bin", back = pc.dir() + "/back.bin";
  std::string data(9u << 20, '\0');
  std::mt19937 rng(1);
  for (auto &ch : data) ch = char(rng());
  std::ofstream(in, std::ios::binary).write(data.data(), std::streamsize(data.size()));
  REQUIRE(pc.cli("object put --pool clitest big " + in, &out) == 0);
  REQUIRE(pc.cli("object get --pool clitest big " + back, &out) == 0);
  std::ifstream bf(back, std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(bf)), std::istreambuf_iterator<char>());
  CHECK(got == data);
  REQUIRE(pc.cli("object stat --pool clitest big --format json", &out) == 0);
  CHECK_THAT(out, Catch::Contains("\"size\":" + std::to_string(data.size())));
  REQUIRE(pc.cli("object put clitest small /etc/hostname", &out) == 0);  // positional pool
  REQUIRE(pc.cli("object ls --pool clitest --format json", &out) == 0);
  CHECK_THAT(out, Catch::Contains("\"big\"") && Catch::Contains("\"small\""));
  REQUIRE(pc.cli("object rm --pool clitest big small", &out) == 0);
  CHECK(pc.cli("object stat --pool clitest big", &out) == 1);
  CHECK_THAT(out, Catch::Contains("ENOENT"));
  CHECK(pc.cli("object put big", &out) == 2);  // usage: no pool

  REQUIRE(pc.cli("bench objects write --pool clitest --size 4K --concurrency 4 --seconds 1 "
                 "--no-cleanup --format json",
                 &out) == 0);
  CHECK_THAT(out, Catch::Contains("\"errors\":0"));
  REQUIRE(pc.cli("bench objects seq --pool clitest --concurrency 4 --seconds 1", &out) == 0);
  CHECK_THAT(out, Catch::Contains("latency"));
  REQUIRE(pc.cli("bench objects rand --pool clitest --concurrency 2 --seconds 1 --format json",
                 &out) == 0);
  CHECK_THAT(out, Catch::Contains("\"errors\":0"));
  REQUIRE(pc.cli("bench objects cleanup --pool clitest", &out) == 0);
  CHECK_THAT(out, Catch::Contains("removed"));
  CHECK(pc.cli("bench objects seq --pool clitest --seconds 1", &out) == 1);

  REQUIRE(pc.cli("pg ls clitest", &out) == 0);
  CHECK_THAT(out, Catch::Contains("active"));
  REQUIRE(pc.cli("auth add client.tmp", &out) == 0);
  CHECK_THAT(out, Catch::Contains("[client.tmp]"));
  REQUIRE(pc.cli("auth ls", &out) == 0);
  CHECK_THAT(out, Catch::Contains("client.tmp"));
  REQUIRE(pc.cli("auth rm client.tmp", &out) == 0);
  REQUIRE(pc.cli("pool rm clitest", &out) == 0);
  CHECK(pc.cli("pool get clitest", &out) == 1);
  CHECK(pc.cli("osd bogus", &out) != 0);
}

TEST_CASE(
    "real cluster: a CLI command whose primary is frozen gives up after --timeout and "
    "names the object, PG and OSD it waited for") {
  // A long grace: the monitor does not mark the frozen OSD down (which
  // would let the op go to a new primary and succeed) while the CLI waits.
  ProcessCluster pc(3, {"heartbeat_grace_ms=30000"});
  REQUIRE_CLUSTER(pc);
  strata_cluster_t c = pc.connect();
  make_pool(c, "frozen", 3, 2);
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "frozen", &io) == 0);
  REQUIRE(strata_write_full(io, "victim", "data", 4) == 0);
  strata_object_location loc{};
  loc.struct_size = sizeof loc;
  REQUIRE(strata_object_locate(io, "victim", &loc) == 0);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
  pid_t pid = pc.osd_pid(loc.primary);
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGSTOP) == 0);
  REQUIRE(wait_stopped(pid));
  std::string out;
  int rc = pc.cli("object stat --pool frozen victim --timeout 2", &out);
  ::kill(pid, SIGCONT);
  INFO(out);
  CHECK(rc == 1);
  CHECK_THAT(out, Catch::Contains("ETIMEDOUT") && Catch::Contains("victim") &&
                      Catch::Contains("osd." + std::to_string(loc.primary) + ", primary of pg"));
}

TEST_CASE("real cluster: a write to a frozen, then killed, primary is resent to the new primary "
          "and every acknowledged write reads back") {
  ProcessCluster pc(3, {"heartbeat_interval_ms=200", "heartbeat_grace_ms=1500"});
  REQUIRE_CLUSTER(pc);
  strata_cluster_t c = pc.connect();
  make_pool(c, "kill", 3, 2);
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "kill", &io) == 0);

  // A background writer, acknowledged writes remembered.
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<int> acked;
  std::chrono::milliseconds worst{0};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      std::string oid = "w." + std::to_string(i), data = content_of(i);
      auto t0 = std::chrono::steady_clock::now();
      int rc = strata_write_full(io, oid.c_str(), data.data(), data.size());
      auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - t0);
      worst = std::max(worst, took);
      if (rc == 0) acked.push_back(i);
      else errors++;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  // Freeze the primary of "victim", send it a write it cannot answer, kill it.
  strata_object_location loc{};
  loc.struct_size = sizeof loc;
  REQUIRE(strata_object_locate(io, "victim", &loc) == 0);
  int target = loc.primary;
  REQUIRE(target >= 0);
  pid_t pid = pc.osd_pid(target);
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGSTOP) == 0);
  REQUIRE(wait_stopped(pid));
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "victim", comp, "survived", 8) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(strata_completion_is_complete(comp) == 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);

  CHECK(strata_completion_wait(comp) == 0);
  strata_completion_release(comp);
  auto *h = reinterpret_cast<strata_cluster *>(c);
  CHECK(h->client->objecter()->stats().resends >= 1);
  REQUIRE(strata_object_locate(io, "victim", &loc) == 0);
  CHECK(loc.primary != target);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;
  writer.join();
  CHECK(errors == 0);
  CHECK(acked.size() > 10);
  CHECK(worst < std::chrono::seconds(20));
  INFO("slowest write while an OSD died: " << worst.count() << " ms");

  char buf[256];
  CHECK(strata_read(io, "victim", buf, sizeof buf, 0) == 8);
  for (int i : acked) {
    std::string oid = "w." + std::to_string(i), want = content_of(i);
    int64_t n = strata_read(io, oid.c_str(), buf, sizeof buf, 0);
    REQUIRE(n == int64_t(want.size()));
    CHECK(std::string(buf, size_t(n)) == want);
  }

  // The OSD comes back; everything is still there and writes go on.
  pc.start_osd(target);
  CHECK(wait_until([&] { return up_osds(c) == 3; }, 30000));
  // Reads of objects it missed are the OSDs' business (recovery); give
  // them the time to get every PG clean first.
  CHECK(wait_until([&] { return all_clean(c); }, 60000));
  int missing = 0, missing_on_target = 0;
  for (int i : acked) {
    std::string oid = "w." + std::to_string(i);
    if (strata_read(io, oid.c_str(), buf, sizeof buf, 0) != int64_t(content_of(i).size())) {
      missing++;
      REQUIRE(strata_object_locate(io, oid.c_str(), &loc) == 0);
      missing_on_target += loc.primary == target;
    }
  }
  INFO("osd." << target << " restarted; unreadable objects: " << missing << " of " << acked.size()
              << ", " << missing_on_target << " of them with it as primary");
  CHECK(missing == 0);
  CHECK(strata_write_full(io, "after", "x", 1) == 0);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("real cluster: a write retried with its request id from another client instance is "
          "applied once and answered with the first attempt's version") {
  ProcessCluster pc(1);
  REQUIRE_CLUSTER(pc);
  strata_cluster *first = pc.connect();
  strata_cluster *second = pc.connect();  // as a restarted program would be
  make_pool(first, "reqid", 1, 1);
  strata_ioctx_t io1 = nullptr, io2 = nullptr;
  REQUIRE(strata_ioctx_create(first, "reqid", &io1) == 0);
  REQUIRE(strata_ioctx_create(second, "reqid", &io2) == 0);

  // Appends are not idempotent: an attempt applied twice shows as a longer object.
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_append(op, "x", 1);
  REQUIRE(strata_write_op_set_request_id(op, "job-7/log/1") == 0);
  uint64_t v1 = 0, v2 = 0;
  REQUIRE(strata_write_op_operate(op, io1, "log", &v1) == 0);
  REQUIRE(strata_write_op_operate(op, io2, "log", &v2) == 0);
  CHECK(v2 == v1);
  strata_write_op_release(op);

  // Another id is another write.
  strata_write_op_t next = strata_write_op_new();
  strata_write_op_append(next, "y", 1);
  REQUIRE(strata_write_op_set_request_id(next, "job-7/log/2") == 0);
  uint64_t v3 = 0;
  REQUIRE(strata_write_op_operate(next, io2, "log", &v3) == 0);
  CHECK(v3 > v1);
  strata_write_op_release(next);

  char buf[16] = {};
  CHECK(strata_read(io1, "log", buf, sizeof buf, 0) == 2);
  CHECK(std::string(buf, 2) == "xy");
  CHECK(strata_write_op_set_request_id(nullptr, "x") == -EINVAL);
  strata_ioctx_destroy(io1);
  strata_ioctx_destroy(io2);
  strata_cluster_shutdown(first);
  strata_cluster_shutdown(second);
}

TEST_CASE(
    "real cluster: a read whose reply is over the messenger's limits gets EMSGSIZE, not "
    "silence") {
  ProcessCluster &pc = shared_cluster();
  REQUIRE_CLUSTER(pc);
  strata_cluster_t c = pc.connect();
  if (strata_pool_lookup(c, "bigreply") == -ENOENT) make_pool(c, "bigreply", 3, 2);
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "bigreply", &io) == 0);
  // 320 values of 16 KiB: 5 MiB, past the 4 MiB payload limit when asked
  // for at once; set in rounds that each fit.
  const size_t n = 320;
  std::vector<std::string> names(n);
  const std::string value(16 * 1024, 'v');
  std::vector<strata_bytes> keys(n), values(n);
  for (size_t i = 0; i < n; ++i) {
    names[i] = "k" + std::to_string(1000 + i);
    keys[i] = {names[i].data(), names[i].size()};
    values[i] = {value.data(), value.size()};
  }
  for (size_t i = 0; i < n; i += 80)
    REQUIRE(strata_omap_set(io, "wide", &keys[i], &values[i], 80) == 0);
  strata_omap_iter_t it = nullptr;
  int rc = strata_omap_get_keys(io, "wide", keys.data(), n, &it);
  std::string why = strata_last_error();
  INFO(why);
  CHECK(rc == -EMSGSIZE);
  CHECK_THAT(why, Catch::Contains("wide") && Catch::Contains("over the messenger's limits"));
  if (rc == 0) strata_omap_iter_end(it);
  // The connection and the object are fine: a smaller read works.
  REQUIRE(strata_omap_get_keys(io, "wide", keys.data(), 100, &it) == 0);
  CHECK(strata_omap_iter_size(it) == 100);
  strata_omap_iter_end(it);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}
