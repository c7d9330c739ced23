// The fs map (docs/FILESYSTEM.md, "The fs map"): its codec, the monitor's
// MDS policy (MdsTracker) as pure map logic, and a real `strata mon`
// driven by fake MDS daemons (MonClients as mds.x / mds.y sending beacons)
// and the `strata fs` CLI.
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "cluster/map_wire.h"
#include "common/json.h"
#include "mon/mds_tracker.h"
#include "mon/mon_client.h"
#include "mon_test_support.h"
#include "msg/message_types.h"
#include "msg/wire_codec.h"

using namespace strata;
using namespace strata::mon;
using namespace std::chrono_literals;
using cluster::ClusterMap;
using cluster::FsInfo;
using cluster::MdsInfo;
using cluster::MdsState;
using mon_test::eventually;
using mon_test::MonFixture;

namespace {

constexpr const char *kFsid = "0b5e3a52-1111-4222-8333-444455556666";

ClusterMap map_with_fs() {
  ClusterMap m;
  m.epoch = 7;
  m.fsid = kFsid;
  m.filesystems[1] = FsInfo{1, "default", 2, 3, 5};
  m.filesystems[4] = FsInfo{4, "other", 5, 6, 6};
  m.fs_max = 4;
  m.mds["a"] = MdsInfo{"a", "127.0.0.1:6900", MdsState::kActive, 1, 6, 5};
  m.mds["b"] = MdsInfo{"b", "127.0.0.1:6901", MdsState::kStandby, 0, 0, 6};
  return m;
}

}  // namespace

TEST_CASE("fs map: full map round trip keeps filesystems, MDS daemons and fs_max") {
  ClusterMap m = map_with_fs();
  auto back = cluster::decode_map(cluster::encode_map(m));
  REQUIRE(back.ok());
  CHECK(back->filesystems == m.filesystems);
  CHECK(back->mds == m.mds);
  CHECK(back->fs_max == 4);
  CHECK(*back == m);
}

TEST_CASE("fs map: incrementals add, change and remove filesystems and MDS daemons") {
  ClusterMap from = map_with_fs();
  ClusterMap to = from;
  to.epoch = from.epoch + 1;
  to.filesystems.erase(4);
  to.filesystems[9] = FsInfo{9, "new", 7, 8, 8};
  to.fs_max = 9;
  to.mds.erase("a");
  to.mds["b"].state = MdsState::kReplay;
  to.mds["b"].fs_id = 1;
  to.mds["b"].incarnation = 8;
  to.mds["c"] = MdsInfo{"c", "127.0.0.1:6902", MdsState::kStandby, 0, 0, 8};
  auto applied = cluster::apply_incremental(from, cluster::encode_incremental(from, to));
  REQUIRE(applied.ok());
  CHECK(*applied == to);

  // An incremental that touches nothing of the fs map leaves it alone.
  ClusterMap next = to;
  next.epoch = to.epoch + 1;
  next.pool_max = 3;
  auto same = cluster::apply_incremental(to, cluster::encode_incremental(to, next));
  REQUIRE(same.ok());
  CHECK(same->filesystems == to.filesystems);
  CHECK(same->mds == to.mds);
  CHECK(same->fs_max == 9);
}

TEST_CASE("fs map: a map from before the fs fields decodes with none") {
  capnp::MallocMessageBuilder b;
  auto w = b.initRoot<wire::ClusterMap>();
  w.setEpoch(3);
  w.setFsid(kFsid);
  w.setPlacementPlugin("crush");
  w.setPoolMax(1);
  kj::Array<capnp::word> words = capnp::messageToFlatArray(b);
  auto bytes = words.asBytes();
  auto m = cluster::decode_map(
      std::string_view(reinterpret_cast<const char *>(bytes.begin()), bytes.size()));
  REQUIRE(m.ok());
  CHECK(m->epoch == 3);
  CHECK(m->filesystems.empty());
  CHECK(m->mds.empty());
  CHECK(m->fs_max == 0);
}

namespace {

MdsBeaconInfo beacon(const std::string &name, MdsState st = MdsState::kStandby, uint32_t fs = 0,
                     uint64_t inc = 0) {
  MdsBeaconInfo b;
  b.name = name;
  b.addr = "127.0.0.1:69" + std::to_string(name[0] - 'a' + 10);
  b.state = st;
  b.fs_id = fs;
  b.incarnation = inc;
  return b;
}

// Applies a beacon as the monitor does: the next epoch only when it changed.
bool apply(MdsTracker &t, ClusterMap &m, const MdsBeaconInfo &b, const void *conn, uint64_t now) {
  ClusterMap next = m;
  std::vector<std::string> ev;
  if (!t.on_beacon(m, b, conn, now, next, &ev)) return false;
  next.epoch = m.epoch + 1;
  m = next;
  return true;
}

bool tick(MdsTracker &t, ClusterMap &m, uint64_t now, uint64_t grace) {
  ClusterMap next = m;
  std::vector<std::string> ev;
  if (!t.expire(now, grace, next, &ev)) return false;
  next.epoch = m.epoch + 1;
  m = next;
  return true;
}

ClusterMap one_fs() {
  ClusterMap m;
  m.epoch = 10;
  m.fsid = kFsid;
  m.filesystems[1] = FsInfo{1, "default", 1, 2, 3};
  m.fs_max = 1;
  return m;
}

}  // namespace

TEST_CASE("mds policy: beacon -> standby -> replay -> active; repeats change nothing") {
  MdsTracker t;
  ClusterMap m = one_fs();
  int conn = 0;
  // A new MDS is added and, the fs having nobody, given it in the same epoch.
  REQUIRE(apply(t, m, beacon("a"), &conn, 1000));
  CHECK(m.epoch == 11);
  REQUIRE(m.mds.count("a"));
  CHECK(m.mds["a"].state == MdsState::kReplay);
  CHECK(m.mds["a"].fs_id == 1);
  CHECK(m.mds["a"].incarnation == 11);
  CHECK(m.mds["a"].addr == "127.0.0.1:6910");
  // Not caught up yet: still standby on the same session. Nothing changes.
  CHECK_FALSE(apply(t, m, beacon("a"), &conn, 1100));
  CHECK_FALSE(apply(t, m, beacon("a", MdsState::kReplay, 1, 11), &conn, 1200));
  REQUIRE(apply(t, m, beacon("a", MdsState::kActive, 1, 11), &conn, 1300));
  CHECK(m.mds["a"].state == MdsState::kActive);
  CHECK(m.active_mds(1) == &m.mds["a"]);
  CHECK_FALSE(apply(t, m, beacon("a", MdsState::kActive, 1, 11), &conn, 1400));
  // A second MDS stays standby.
  int conn_b = 0;
  REQUIRE(apply(t, m, beacon("b"), &conn_b, 1500));
  CHECK(m.mds["b"].state == MdsState::kStandby);
  CHECK_FALSE(apply(t, m, beacon("b"), &conn_b, 1600));
}

TEST_CASE("mds policy: a silent active is removed after the grace, a standby takes over") {
  MdsTracker t;
  ClusterMap m = one_fs();
  int ca = 0, cb = 0;
  REQUIRE(apply(t, m, beacon("a"), &ca, 1000));
  REQUIRE(apply(t, m, beacon("a", MdsState::kActive, 1, 11), &ca, 1100));
  REQUIRE(apply(t, m, beacon("b"), &cb, 1100));
  uint64_t inc_a = m.mds["a"].incarnation;
  CHECK_FALSE(tick(t, m, 3000, 3000));  // b keeps beaconing, a within its grace
  CHECK_FALSE(apply(t, m, beacon("b"), &cb, 4000));
  REQUIRE(tick(t, m, 4200, 3000));
  CHECK_FALSE(m.mds.count("a"));
  CHECK(m.mds["b"].state == MdsState::kReplay);
  CHECK(m.mds["b"].fs_id == 1);
  CHECK(m.mds["b"].incarnation > inc_a);
  CHECK(m.mds["b"].incarnation == m.epoch);
  // The old active comes back from a pause, still believing it is active:
  // an older incarnation than b's now... it is simply new to the map.
  REQUIRE(apply(t, m, beacon("a", MdsState::kActive, 1, inc_a), &ca, 4300));
  CHECK(m.mds["a"].state == MdsState::kStandby);
  CHECK(m.active_mds(1) == nullptr);
}

TEST_CASE(
    "mds policy: a restarted MDS (standby, incarnation 0, new session) loses its fs at once") {
  MdsTracker t;
  ClusterMap m = one_fs();
  int first = 0, second = 0, cb = 0;
  REQUIRE(apply(t, m, beacon("b"), &cb, 900));  // b is first: it takes the fs
  REQUIRE(apply(t, m, beacon("b", MdsState::kActive, 1, 11), &cb, 950));
  REQUIRE(apply(t, m, beacon("a"), &first, 1000));
  CHECK(m.mds["a"].state == MdsState::kStandby);
  // b restarts: its new process beacons standby on a new session.
  uint64_t old_inc = m.mds["b"].incarnation;
  REQUIRE(apply(t, m, beacon("b"), &second, 1100));
  // The fs went to the first standby by name (a) at a new incarnation.
  CHECK(m.mds["a"].state == MdsState::kReplay);
  CHECK(m.mds["a"].incarnation > old_inc);
  CHECK(m.mds["b"].state == MdsState::kStandby);
  CHECK(m.mds["b"].incarnation == 0);
}

TEST_CASE("mds policy: beacons of an older incarnation are ignored (a zombie)") {
  MdsTracker t;
  ClusterMap m = one_fs();
  int c = 0;
  REQUIRE(apply(t, m, beacon("a"), &c, 1000));  // replay at 11
  uint64_t inc = m.mds["a"].incarnation;
  // The map moves it to a newer incarnation (e.g. it restarted and was
  // given the fs again).
  int c2 = 0;
  REQUIRE(apply(t, m, beacon("a"), &c2, 1100));
  REQUIRE(m.mds["a"].incarnation > inc);
  ClusterMap before = m;
  CHECK_FALSE(apply(t, m, beacon("a", MdsState::kActive, 1, inc), &c, 1200));
  CHECK(m == before);
  // Nor does it count as alive: without current beacons it expires.
  CHECK(tick(t, m, 1100 + 3001, 3000));
  CHECK_FALSE(m.mds.count("a"));
}

TEST_CASE("mds policy: a standby with wantFs only takes that filesystem") {
  MdsTracker t;
  ClusterMap m = one_fs();
  m.filesystems[2] = FsInfo{2, "second", 4, 5, 3};
  int ca = 0, cb = 0;
  MdsBeaconInfo a = beacon("a");
  a.want_fs = "second";
  REQUIRE(apply(t, m, a, &ca, 1000));
  CHECK(m.mds["a"].fs_id == 2);
  REQUIRE(apply(t, m, beacon("b"), &cb, 1000));
  CHECK(m.mds["b"].fs_id == 1);
}

// ---------------------------------------------------------------- process

namespace {

// An MDS as far as the monitor can tell: a MonClient as mds.NAME sending a
// beacon every 50 ms with what it is told.
class FakeMds {
 public:
  FakeMds(const MonFixture &f, const std::string &name) : name_(name) {
    MonClientOptions o;
    o.mon_addr = f.addr();
    o.entity = "mds." + name;
    o.secret = f.secret(o.entity);
    o.want_auth = true;
    o.reconnect_interval = 100ms;
    mc_ = std::make_unique<MonClient>(o, mon_test::quiet_log());
    mc_->on_auth([this](uint64_t, const std::map<std::string, std::string> &keys) {
      std::lock_guard lk(mu_);
      keys_ = keys;
    });
    Status s = mc_->start();
    INFO(s.message());
    REQUIRE(s.ok());
    thread_ = std::thread([this] {
      while (running_) {
        send();
        std::this_thread::sleep_for(50ms);
      }
    });
  }
  ~FakeMds() { stop(); }
  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  void set(MdsState st, uint32_t fs, uint64_t inc) {
    std::lock_guard lk(mu_);
    state_ = st;
    fs_ = fs;
    inc_ = inc;
  }
  MonClient &mc() { return *mc_; }
  std::map<std::string, std::string> keys() {
    std::lock_guard lk(mu_);
    return keys_;
  }
  const MdsInfo *in_map() {
    auto m = mc_->map();
    if (!m) return nullptr;
    auto it = m->mds.find(name_);
    map_ = m;
    return it == m->mds.end() ? nullptr : &it->second;
  }

 private:
  void send() {
    capnp::MallocMessageBuilder b;
    auto w = b.initRoot<wire::MdsBeacon>();
    {
      std::lock_guard lk(mu_);
      w.setName(name_);
      w.setAddr("127.0.0.1:6950");
      w.setState(uint8_t(state_));
      w.setFsId(fs_);
      w.setIncarnation(inc_);
      w.setFsid(kFsid);
      w.setSessions(3);
      w.setInodes(42);
      w.setCacheBytes(1000);
      w.setCacheLimitBytes(4000);
    }
    mc_->send(msg::make_message(msg::kMsgMdsBeacon, b));
  }
  std::string name_;
  std::unique_ptr<MonClient> mc_;
  std::shared_ptr<const ClusterMap> map_;
  std::mutex mu_;
  MdsState state_ = MdsState::kStandby;
  uint32_t fs_ = 0;
  uint64_t inc_ = 0;
  std::map<std::string, std::string> keys_;
  std::atomic<bool> running_{true};
  std::thread thread_;
};

json::Value cli_json(const MonFixture &f, std::vector<std::string> args, int want_rc = 0) {
  args.insert(args.end(), {"--conf", f.conf(), "--format", "json"});
  std::string out;
  int rc = mon_test::run_strata(args, &out);
  INFO(out);
  REQUIRE(rc == want_rc);
  if (want_rc != 0) return json::Value();
  auto j = json::parse(out);
  REQUIRE(j.ok());
  return *j;
}

}  // namespace

TEST_CASE("mon process: fs new/ls/rm/status and MDS failover driven by beacons") {
  MonFixture f(0, {{"mds_beacon_grace_ms", "600"},
                   {"mon_default_pool_size", "1"},
                   {"mon_default_pool_min_size", "1"}});
  // fs new makes its pools; a second fs of the same name is refused.
  json::Value made = cli_json(f, {"fs", "new", "cephish", "--pg-num", "16"});
  CHECK(made["name"].as_string() == "cephish");
  cli_json(f, {"fs", "new", "cephish"}, 1);
  json::Value pools = cli_json(f, {"pool", "ls"});
  std::string pool_text = pools.dump();
  CHECK(pool_text.find("cephish.meta") != std::string::npos);
  CHECK(pool_text.find("cephish.data") != std::string::npos);
  json::Value ls = cli_json(f, {"fs", "ls"});
  REQUIRE(ls.as_array().size() == 1);
  uint32_t fs_id = uint32_t(ls.as_array()[0]["id"].as_int());

  // mds.x: standby, then given the fs (replay), then active.
  FakeMds x(f, "x");
  REQUIRE(eventually([&] {
    const MdsInfo *d = x.in_map();
    return d && d->state == MdsState::kReplay && d->fs_id == fs_id;
  }));
  uint64_t inc_x = x.in_map()->incarnation;
  x.set(MdsState::kActive, fs_id, inc_x);
  REQUIRE(eventually([&] {
    const MdsInfo *d = x.in_map();
    return d && d->state == MdsState::kActive;
  }));
  // An MDS gets every key (to verify its clients), like an OSD.
  REQUIRE(eventually([&] { return x.keys().count("client.admin") > 0; }));

  // Beacons of an unchanged MDS do not make epochs.
  uint64_t epoch = x.mc().epoch();
  std::this_thread::sleep_for(300ms);
  CHECK(x.mc().epoch() == epoch);

  json::Value st = cli_json(f, {"fs", "status"});
  REQUIRE(st["mds"].as_array().size() == 1);
  CHECK(st["mds"].as_array()[0]["state"].as_string() == "active");
  CHECK(st["mds"].as_array()[0]["addr"].as_string() == "127.0.0.1:6950");
  CHECK(st["filesystems"].as_array()[0]["active_stats"]["inodes"].as_int() == 42);

  // fs rm is refused while x is active.
  cli_json(f, {"fs", "rm", "cephish"}, 1);

  // mds.y as standby; x goes silent: y takes over at a higher incarnation.
  FakeMds y(f, "y");
  REQUIRE(eventually([&] { return y.in_map() != nullptr; }));
  x.stop();
  REQUIRE(eventually([&] {
    const MdsInfo *d = y.in_map();
    return d && d->state == MdsState::kReplay && d->incarnation > inc_x;
  }));
  CHECK(y.in_map()->fs_id == fs_id);
  auto m = y.mc().map();
  CHECK_FALSE(m->mds.count("x"));

  // An impostor: mds.y beaconing for another name loses its session.
  // (Not exercised here: covered by the EPERM path like OsdBoot.)

  // fs rm --force turns y into a standby and leaves the pools.
  json::Value rm = cli_json(f, {"fs", "rm", "cephish", "--force"});
  CHECK(rm["removed"].as_string() == "cephish");
  REQUIRE(eventually([&] {
    const MdsInfo *d = y.in_map();
    return d && d->state == MdsState::kStandby;
  }));
  CHECK(cli_json(f, {"fs", "ls"}).as_array().empty());
  CHECK(cli_json(f, {"pool", "ls"}).dump().find("cephish.data") != std::string::npos);
  // A new fs gets the next id, never the old one.
  json::Value again = cli_json(f, {"fs", "new", "second"});
  CHECK(uint32_t(again["id"].as_int()) > fs_id);
}
