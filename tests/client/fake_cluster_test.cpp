// The client against the real monitor and fake OSDs, in one process: the
// whole C API (api_cases.cpp), and the Objecter's resends under injected
// faults — a primary that never answers and is marked down, connections
// that close before or after a write is applied, retryEpoch, an OSD that
// restarts on a new address, timeouts, deleted pools, shutdown.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "api_cases.h"
#include "client/c_api_internal.h"
#include "fake_cluster.h"

using namespace clienttest;

namespace {

void make_pool(strata_cluster_t c, const std::string &name, uint32_t size, uint32_t pg_num = 8) {
  strata_pool_args a{};
  a.struct_size = sizeof a;
  a.size = size;
  a.min_size = 1;
  a.pg_num = pg_num;
  int rc = strata_pool_create(c, name.c_str(), &a);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
}

strata_ioctx_t open_io(strata_cluster_t c, const std::string &pool) {
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, pool.c_str(), &io) == 0);
  return io;
}

std::string instance_of(strata_cluster_t c) {
  char buf[128];
  strata_cluster_instance_id(c, buf, sizeof buf);
  return buf;
}

// The requests osd received from `client` for `oid`.
std::vector<ReceivedOp> ops_for(FakeOsd &osd, const std::string &client, const std::string &oid) {
  std::vector<ReceivedOp> out;
  for (const ReceivedOp &r : osd.received())
    if (r.client == client && r.oid == oid) out.push_back(r);
  return out;
}

int mon_cmd(strata_cluster_t c, const char *prefix, std::vector<strata_cmd_arg> args) {
  char *msg = nullptr;
  int rc = strata_mon_command(c, prefix, args.data(), args.size(), &msg, nullptr, nullptr, nullptr);
  INFO(prefix << ": " << (msg ? msg : ""));
  strata_buffer_free(msg);
  return rc;
}

}  // namespace

#define STRATA_FAKE_CASE(name, text)                   \
  TEST_CASE("fake cluster: " text) {                   \
    FakeCluster fc(1);                                 \
    strata_cluster_t c = fc.connect();                 \
    make_pool(c, "api", 1);                            \
    ApiEnv env{c, "api"};                              \
    api_case_##name(env);                              \
    strata_cluster_shutdown(c);                        \
  }
STRATA_CLIENT_API_CASES(STRATA_FAKE_CASE)
#undef STRATA_FAKE_CASE

TEST_CASE("fake cluster: an op the primary never answers is resent to the new primary when it is "
          "marked down") {
  FakeCluster fc(2);
  strata_cluster_t c = fc.connect();
  make_pool(c, "p", 2);
  strata_ioctx_t io = open_io(c, "p");
  strata_object_location loc{};
  loc.struct_size = sizeof loc;
  REQUIRE(strata_object_locate(io, "moved", &loc) == 0);
  REQUIRE(loc.n_acting == 2);
  int primary = loc.primary, other = loc.acting[1];
  fc.osd(primary).set_fault([](const ReceivedOp &) { return Fault::kDrop; });

  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "moved", comp, "payload", 7) == 0);
  std::string me = instance_of(c);
  REQUIRE(wait_until([&] { return !ops_for(fc.osd(primary), me, "moved").empty(); }));
  CHECK(strata_completion_is_complete(comp) == 0);

  std::string id = std::to_string(primary);
  REQUIRE(mon_cmd(c, "osd down", {{"id", id.c_str()}}) == 0);
  CHECK(strata_completion_wait(comp) == 0);
  strata_completion_release(comp);

  auto first = ops_for(fc.osd(primary), me, "moved");
  auto second = ops_for(fc.osd(other), me, "moved");
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  CHECK(second[0].tid == first[0].tid);  // the same request, not a new one
  CHECK(second[0].map_epoch > first[0].map_epoch);
  CHECK(fc.osd(other).applied(me, second[0].tid) == 1);

  auto *cluster = reinterpret_cast<strata_cluster *>(c);
  auto stats = cluster->client->objecter()->stats();
  CHECK(stats.resends >= 1);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: a connection closed after the write was applied is resent with the same "
          "tid and applied once") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "p", 1);
  strata_ioctx_t io = open_io(c, "p");
  std::atomic<int> seen{0};
  fc.osd(0).set_fault([&](const ReceivedOp &r) {
    if (r.oid == "once" && seen++ == 0) return Fault::kCloseAfterApply;
    return Fault::kNone;
  });
  REQUIRE(strata_append(io, "once", "x", 1) == 0);
  std::string me = instance_of(c);
  auto got = ops_for(fc.osd(0), me, "once");
  REQUIRE(got.size() == 2);
  CHECK(got[0].tid == got[1].tid);
  CHECK(fc.osd(0).applied(me, got[0].tid) == 1);
  CHECK(fc.osd(0).replays() == 1);
  char buf[8];
  CHECK(strata_read(io, "once", buf, sizeof buf, 0) == 1);  // appended exactly once

  // Closed before it was applied: resent, applied by the second send.
  seen = 0;
  fc.osd(0).set_fault([&](const ReceivedOp &r) {
    if (r.oid == "twice" && seen++ == 0) return Fault::kCloseBefore;
    return Fault::kNone;
  });
  REQUIRE(strata_append(io, "twice", "y", 1) == 0);
  got = ops_for(fc.osd(0), me, "twice");
  REQUIRE(got.size() == 2);
  CHECK(got[0].tid == got[1].tid);
  CHECK(fc.osd(0).applied(me, got[0].tid) == 1);
  CHECK(strata_read(io, "twice", buf, sizeof buf, 0) == 1);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: retryEpoch makes the client wait for that map, then resend") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "p", 1);
  strata_ioctx_t io = open_io(c, "p");
  std::atomic<int> seen{0};
  fc.osd(0).set_fault([&](const ReceivedOp &r) {
    if (r.oid == "later" && seen++ == 0) return Fault::kRetryNextEpoch;
    return Fault::kNone;
  });
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "later", comp, "v", 1) == 0);
  REQUIRE(wait_until([&] { return seen.load() >= 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(strata_completion_is_complete(comp) == 0);  // waits for a map that does not exist yet
  make_pool(c, "another", 1);                        // a new epoch
  CHECK(strata_completion_wait(comp) == 0);
  strata_completion_release(comp);
  auto got = ops_for(fc.osd(0), instance_of(c), "later");
  REQUIRE(got.size() == 2);
  CHECK(got[0].tid == got[1].tid);
  CHECK(got[1].map_epoch > got[0].map_epoch);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: an op the OSD bounces at the client's own epoch is sent again after a "
          "back-off, without waiting for a map that may never come") {
  // An OSD that has the client's map but not yet the PG (CI once hung 600 s
  // here in a quiet cluster: the client waited for epoch + 1).
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "p", 1);
  strata_ioctx_t io = open_io(c, "p");
  std::atomic<int> seen{0};
  fc.osd(0).set_fault([&](const ReceivedOp &r) {
    if (r.oid == "bounced" && seen++ < 3) return Fault::kRetrySameEpoch;
    return Fault::kNone;
  });
  REQUIRE(strata_write_full(io, "bounced", "v", 1) == 0);
  auto got = ops_for(fc.osd(0), instance_of(c), "bounced");
  REQUIRE(got.size() == 4);
  for (const auto &op : got) {
    CHECK(op.tid == got[0].tid);
    CHECK(op.map_epoch == got[0].map_epoch);  // no new map was needed
  }
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: an OSD that restarts on a new address gets the unanswered op again") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "p", 1);
  strata_ioctx_t io = open_io(c, "p");
  fc.osd(0).set_fault([](const ReceivedOp &) { return Fault::kDrop; });
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "survivor", comp, "abc", 3) == 0);
  std::string me = instance_of(c);
  REQUIRE(wait_until([&] { return !ops_for(fc.osd(0), me, "survivor").empty(); }));
  uint64_t tid = ops_for(fc.osd(0), me, "survivor")[0].tid;
  fc.restart_osd(0);  // the new one answers
  CHECK(strata_completion_wait(comp) == 0);
  strata_completion_release(comp);
  auto got = ops_for(fc.osd(0), me, "survivor");
  REQUIRE(got.size() == 1);
  CHECK(got[0].tid == tid);
  char buf[4];
  CHECK(strata_read(io, "survivor", buf, sizeof buf, 0) == 3);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: client_op_timeout_ms fails an unanswered op with ETIMEDOUT") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect({"client_op_timeout_ms=300"});
  make_pool(c, "p", 1);
  strata_ioctx_t io = open_io(c, "p");
  fc.osd(0).set_fault([](const ReceivedOp &) { return Fault::kDrop; });
  auto start = std::chrono::steady_clock::now();
  CHECK(strata_write_full(io, "slow", "x", 1) == -ETIMEDOUT);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= std::chrono::milliseconds(300));
  CHECK(took < std::chrono::seconds(5));
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: ops waiting on a pool that is deleted fail with ENOENT") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "doomed", 1);
  strata_ioctx_t io = open_io(c, "doomed");
  fc.osd(0).set_fault([](const ReceivedOp &) { return Fault::kDrop; });
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "o", comp, "x", 1) == 0);
  REQUIRE(strata_pool_delete(c, "doomed") == 0);
  CHECK(strata_completion_wait(comp) == -ENOENT);
  strata_completion_release(comp);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: shutdown completes in-flight ops with ESHUTDOWN and runs their callbacks") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "p", 1);
  strata_ioctx_t io = open_io(c, "p");
  fc.osd(0).set_fault([](const ReceivedOp &) { return Fault::kDrop; });
  struct Seen {
    std::atomic<int> calls{0};
    std::atomic<int64_t> rv{1};
  } seen;
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(
              [](strata_completion_t cc, void *arg) {
                auto *s = static_cast<Seen *>(arg);
                s->rv = strata_completion_get_return_value(cc);
                s->calls++;
              },
              &seen, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "o", comp, "x", 1) == 0);
  strata_cluster_shutdown(c);
  CHECK(seen.calls == 1);
  CHECK(seen.rv == -ESHUTDOWN);
  CHECK(strata_completion_wait(comp) == -ESHUTDOWN);
  strata_completion_release(comp);
  // The ioctx outlives the handle: its calls fail cleanly.
  CHECK(strata_write_full(io, "o", "x", 1) == -ESHUTDOWN);
  strata_ioctx_destroy(io);
}

TEST_CASE("fake cluster: a client with the wrong key is refused") {
  FakeCluster fc(1);
  std::vector<std::string> o = fc.overrides();
  o.push_back("key=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
  std::vector<const char *> ptrs;
  for (auto &s : o) ptrs.push_back(s.c_str());
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
  a.overrides = ptrs.data();
  a.n_overrides = ptrs.size();
  strata_cluster_t c = nullptr;
  REQUIRE(strata_cluster_create(&a, &c) == 0);
  int rc = strata_cluster_connect(c, 5000);
  INFO(strata_last_error());
  CHECK(rc == -EACCES);
  strata_cluster_shutdown(c);
}

TEST_CASE("fake cluster: an OSD refusing the client's key fails in-flight and new ops with EACCES "
          "at once, with no op timeout set") {
  FakeCluster fc(1);
  strata_cluster_t admin = fc.connect();
  make_pool(admin, "p", 1);
  strata_cluster_shutdown(admin);
  strata_cluster_t c = fc.connect({}, "client.other");  // client_op_timeout_ms stays 0
  strata_ioctx_t io = open_io(c, "p");
  fc.osd(0).set_fault([](const ReceivedOp &) { return Fault::kDrop; });
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  REQUIRE(strata_aio_write_full(io, "held", comp, "payload", 7) == 0);
  std::string me = instance_of(c);
  REQUIRE(wait_until([&] { return !ops_for(fc.osd(0), me, "held").empty(); }));

  // The OSD drops the key and closes the session: the client reconnects,
  // is refused, and the op in flight ends with EACCES (before: retried for
  // ever, the op never completed).
  fc.osd(0).revoke("client.other");
  REQUIRE(wait_until([&] { return strata_completion_is_complete(comp) != 0; }, 5000));
  CHECK(strata_completion_get_return_value(comp) == -EACCES);
  strata_completion_release(comp);

  // A new op is refused just as fast, without waiting for any timeout.
  fc.osd(0).set_fault([](const ReceivedOp &) { return Fault::kNone; });
  auto start = std::chrono::steady_clock::now();
  CHECK(strata_write_full(io, "after", "x", 1) == -EACCES);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  CHECK(ops_for(fc.osd(0), me, "after").empty());
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

// Runs `command` through the shell; its stdout.
std::string run_command(const std::string &command) {
  std::string out;
  std::FILE *p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST_CASE("fake cluster: a program outside bin/ linked against libstrata_client.so finds the "
          "plugins beside the library") {
  FakeCluster fc(1);
  // No STRATA_PLUGIN_PATH: only the library's own location can lead to
  // the placement plugin (before: ETIMEDOUT after waiting out the timeout).
  std::string out = run_command("env -u STRATA_PLUGIN_PATH " STRATA_TEST_OUTSIDE_PROGRAM " " +
                                fc.mon_addr() + " " + fc.keyring_path() + " 10000");
  CHECK(out == "rc 0 connected\n");
}

TEST_CASE("fake cluster: libstrata_client.so without plugins beside it fails at once with ENOENT "
          "naming the directories searched") {
  FakeCluster fc(1);
  char tmpl[] = "/tmp/strata-lonely-lib-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  std::string dir = tmpl;
  std::string lib = dir + "/lib";
  std::filesystem::create_directories(lib);
  std::filesystem::copy_file(STRATA_TEST_CLIENT_LIBRARY, lib + "/" STRATA_TEST_CLIENT_SONAME);
  auto start = std::chrono::steady_clock::now();
  std::string out = run_command("env -u STRATA_PLUGIN_PATH LD_LIBRARY_PATH=" + lib +
                                " " STRATA_TEST_OUTSIDE_PROGRAM " " + fc.mon_addr() + " " +
                                fc.keyring_path() + " 20000");
  auto took = std::chrono::steady_clock::now() - start;
  std::filesystem::remove_all(dir);
  INFO(out);
  CHECK(out.rfind("rc " + std::to_string(-ENOENT) + " ", 0) == 0);
  CHECK(out.find("libstrata_placement_crush.so") != std::string::npos);
  CHECK(out.find(dir + "/plugins") != std::string::npos);       // beside the library
  CHECK(out.find(dir + "/lib/strata/plugins") != std::string::npos);
  // Not the 20 s connect timeout: the answer comes with the first map.
  CHECK(took < std::chrono::seconds(10));
}

TEST_CASE("fake cluster: two clients see each other's writes and have distinct instance ids") {
  FakeCluster fc(1);
  strata_cluster_t a = fc.connect();
  strata_cluster_t b = fc.connect({}, "client.other");
  make_pool(a, "shared", 1);
  // b's map may not have the pool yet: ioctx_create asks the monitor.
  strata_ioctx_t ia = open_io(a, "shared"), ib = open_io(b, "shared");
  REQUIRE(strata_write_full(ia, "o", "from a", 6) == 0);
  char buf[8];
  CHECK(strata_read(ib, "o", buf, sizeof buf, 0) == 6);
  CHECK(instance_of(a) != instance_of(b));
  CHECK(instance_of(b).rfind("client.other.", 0) == 0);
  // Only client.admin may change the cluster.
  strata_pool_args pa{};
  pa.struct_size = sizeof pa;
  CHECK(strata_pool_create(b, "nope", &pa) == -EACCES);
  strata_ioctx_destroy(ia);
  strata_ioctx_destroy(ib);
  strata_cluster_shutdown(a);
  strata_cluster_shutdown(b);
}

// Not run by default ([.]): the client's own share of a depth-1 round trip,
// against an in-memory OSD on loopback. `client_fake_cluster_tests "[latency]"`.
TEST_CASE("fake cluster: depth-1 4 KiB write and read latency", "[.][latency]") {
  FakeCluster fc(1);
  strata_cluster_t c = fc.connect();
  make_pool(c, "lat", 1);
  strata_ioctx_t io = open_io(c, "lat");
  std::string data(4096, 'x');
  char buf[4096];
  for (const char *what : {"write", "read"}) {
    std::vector<double> us;
    for (int i = 0; i < 3000; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      int rc = std::strcmp(what, "write") == 0
                   ? strata_write_full(io, "lat", data.data(), data.size())
                   : int(strata_read(io, "lat", buf, sizeof buf, 0) < 0);
      REQUIRE(rc == 0);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                       .count());
    }
    std::sort(us.begin(), us.end());
    WARN(what << ": p50 " << us[us.size() / 2] << " us, p99 " << us[us.size() * 99 / 100]
              << " us, max " << us.back() << " us");
  }
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}
