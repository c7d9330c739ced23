// The monitor as a real process (`strata mon`) on loopback TCP, driven by
// MonClients: subscriptions and pushes, commands, authentication, bad
// input, and OSD life cycle through a fake OSD (a MonClient as osd.N).
#include <arpa/inet.h>
#include <capnp/message.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>

#include "cluster/map_wire.h"
#include "common/json.h"
#include "mon/mon_client.h"
#include "mon_test_support.h"
#include "msg/message_types.h"
#include "msg/wire_codec.h"

using namespace strata;
using namespace strata::mon;
using namespace std::chrono_literals;
using mon_test::eventually;
using mon_test::MonFixture;

namespace {

std::unique_ptr<MonClient> client(const MonFixture &f, const std::string &entity,
                                  bool want_auth = false) {
  MonClientOptions o;
  o.mon_addr = f.addr();
  o.entity = entity;
  o.secret = f.secret(entity);
  o.want_auth = want_auth;
  o.reconnect_interval = 100ms;
  return std::make_unique<MonClient>(o, mon_test::quiet_log());
}

std::unique_ptr<MonClient> started(const MonFixture &f, const std::string &entity) {
  auto c = client(f, entity);
  Status s = c->start();
  INFO(s.message());
  REQUIRE(s.ok());
  return c;
}

MonCommandResult must_run(MonClient &c, const std::string &prefix,
                          const MonCommandArgs &args = {}) {
  auto r = c.command(prefix, args);
  INFO(prefix << ": " << r.status().message());
  REQUIRE(r.ok());
  INFO(prefix << " -> " << r->message);
  REQUIRE(r->rc == 0);
  return *r;
}

// An OSD as far as the monitor can tell: boots, sends beacons with the PG
// states it is told to report, reports peers.
class FakeOsd {
 public:
  FakeOsd(const MonFixture &f, int id, std::string host = "")
      : id_(id), host_(std::move(host)), mc_(client(f, "osd." + std::to_string(id), true)) {
    mc_->on_auth([this](uint64_t, const std::map<std::string, std::string> &keys) {
      std::lock_guard lk(mu_);
      keys_ = keys;
    });
    mc_->on_connect([this] {
      if (booted_) boot();
    });
    Status s = mc_->start();
    INFO(s.message());
    REQUIRE(s.ok());
  }
  ~FakeOsd() { stop_beacons(); }

  void boot() {
    booted_ = true;
    capnp::MallocMessageBuilder b;
    auto m = b.initRoot<wire::OsdBoot>();
    m.setId(id_);
    m.setAddr("127.0.0.1:" + std::to_string(7000 + id_));
    m.setHost(host_);
    m.setFsid("0b5e3a52-1111-4222-8333-444455556666");
    m.setWeight(0x10000);
    REQUIRE(mc_->send(msg::make_message(msg::kMsgOsdBoot, b)));
  }

  // Beacons every 100 ms; with `clean`, every PG this OSD is primary for
  // is reported active+clean with its current acting set.
  void start_beacons(bool clean) {
    running_ = true;
    beacons_ = std::thread([this, clean] {
      while (running_) {
        send_stats(clean);
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  void stop_beacons() {
    running_ = false;
    if (beacons_.joinable()) beacons_.join();
  }

  void report_failure(int target) {
    capnp::MallocMessageBuilder b;
    auto m = b.initRoot<wire::OsdFailure>();
    m.setTarget(target);
    m.setReporter(id_);
    m.setFailedForMs(5000);
    m.setEpoch(mc_->epoch());
    REQUIRE(mc_->send(msg::make_message(msg::kMsgOsdFailure, b)));
  }

  MonClient &mc() { return *mc_; }
  std::map<std::string, std::string> keys() {
    std::lock_guard lk(mu_);
    return keys_;
  }
  void disconnect() {
    stop_beacons();
    mc_.reset();
  }

 private:
  void send_stats(bool clean) {
    auto map = mc_->map();
    capnp::MallocMessageBuilder b;
    auto s = b.initRoot<wire::OsdStats>();
    s.setId(id_);
    s.setEpoch(map ? map->epoch : 0);
    s.setUsedBytes(1 << 20);
    s.setTotalBytes(1 << 30);
    std::vector<std::pair<cluster::PgId, std::vector<int32_t>>> mine;
    if (clean && map) {
      auto view = cluster::MapView::create(*map, mon_test::crush());
      if (view.ok())
        for (const auto &[pid, p] : map->pools)
          for (uint32_t seed = 0; seed < p.pg_num; ++seed) {
            auto acting = (*view)->acting({pid, seed});
            if (!acting.empty() && acting[0] == id_) mine.push_back({{pid, seed}, acting});
          }
    }
    auto pgs = s.initPgs(unsigned(mine.size()));
    for (unsigned i = 0; i < mine.size(); ++i) {
      pgs[i].setPool(mine[i].first.pool);
      pgs[i].setSeed(mine[i].first.seed);
      pgs[i].setState("active+clean");
      auto a = pgs[i].initActing(unsigned(mine[i].second.size()));
      for (unsigned k = 0; k < mine[i].second.size(); ++k) a.set(k, mine[i].second[k]);
    }
    mc_->send(msg::make_message(msg::kMsgOsdStats, b));
  }

  int id_;
  std::string host_;
  std::unique_ptr<MonClient> mc_;
  std::mutex mu_;
  std::map<std::string, std::string> keys_;
  std::atomic<bool> running_{false}, booted_{false};
  std::thread beacons_;
};

const cluster::OsdInfo *osd_in(MonClient &c, int id) {
  auto m = c.map();
  return m ? m->osd(id) : nullptr;
}

}  // namespace

TEST_CASE("a subscriber gets the map, then every new epoch pushed", "[process]") {
  MonFixture f;
  auto admin = client(f, "client.admin");
  std::mutex mu;
  std::vector<uint64_t> seen;
  admin->on_map([&](std::shared_ptr<const cluster::ClusterMap> m) {
    std::lock_guard lk(mu);
    seen.push_back(m->epoch);
  });
  REQUIRE(admin->start().ok());
  auto m = admin->wait_for_map(1, 5s);
  REQUIRE(m.ok());
  CHECK((*m)->epoch == 1);
  CHECK((*m)->fsid == "0b5e3a52-1111-4222-8333-444455556666");

  auto watcher = started(f, "client.reader");
  REQUIRE(watcher->wait_for_map(1, 5s).ok());
  auto r = must_run(*admin, "pool create", {{"name", "data"}, {"pg_num", "8"}});
  CHECK(r.epoch == 2);
  REQUIRE(watcher->wait_for_map(2, 5s).ok());
  REQUIRE(watcher->map()->pool_by_name("data"));
  must_run(*admin, "pool create", {{"name", "more"}, {"pg_num", "4"}});
  REQUIRE(watcher->wait_for_map(3, 5s).ok());
  REQUIRE(admin->wait_for_map(3, 5s).ok());
  std::lock_guard lk(mu);
  CHECK(seen == std::vector<uint64_t>{1, 2, 3});
}

TEST_CASE("a subscriber reconnects after a monitor restart and catches up from its epoch",
          "[process]") {
  MonFixture f;
  MonClientOptions o;
  o.mon_addr = f.addr();
  o.entity = "client.reader";
  o.secret = f.secret("client.reader");
  o.reconnect_interval = 2s;  // slow, so that epochs pass while it is away
  auto watcher = std::make_unique<MonClient>(o, mon_test::quiet_log());
  std::atomic<int> connects{0};
  watcher->on_connect([&] { ++connects; });
  REQUIRE(watcher->start().ok());
  REQUIRE(watcher->wait_for_map(1, 5s).ok());
  {
    auto admin = started(f, "client.admin");
    must_run(*admin, "pool create", {{"name", "a"}, {"pg_num", "4"}});
  }
  REQUIRE(watcher->wait_for_map(2, 5s).ok());
  f.restart();
  // Epochs made while the watcher was away arrive as incrementals from
  // the epoch it had.
  auto admin = started(f, "client.admin");
  must_run(*admin, "pool create", {{"name", "b"}, {"pg_num", "4"}});
  must_run(*admin, "pool create", {{"name", "c"}, {"pg_num", "4"}});
  auto m = watcher->wait_for_map(4, 10s);
  INFO(m.status().message());
  REQUIRE(m.ok());
  CHECK((*m)->pool_by_name("c"));
  // The map can arrive before the reconnect's on_connect callback has run
  // on the client's own thread: give that a moment instead of racing it.
  for (int i = 0; i < 500 && connects < 2; ++i) std::this_thread::sleep_for(10ms);
  CHECK(connects >= 2);
}

TEST_CASE("pools are created, listed, changed and removed through the daemon", "[process]") {
  MonFixture f;
  auto admin = started(f, "client.admin");
  must_run(*admin, "pool create", {{"name", "data"}, {"size", "2"}, {"pg_num", "16"}});
  auto dup = admin->command("pool create", {{"name", "data"}});
  REQUIRE(dup.ok());
  CHECK(dup->rc == -EEXIST);
  auto ls = must_run(*admin, "pool ls");
  auto j = json::parse(ls.json);
  REQUIRE(j.ok());
  REQUIRE(j->as_array().size() == 1);
  CHECK((*j).as_array()[0]["size"].as_int() == 2);
  must_run(*admin, "pool set", {{"name", "data"}, {"key", "min_size"}, {"value", "1"}});
  auto get = must_run(*admin, "pool get", {{"name", "data"}});
  CHECK(json::parse(get.json)->operator[]("min_size").as_int() == 1);
  must_run(*admin, "pool rm", {{"name", "data"}});
  CHECK(json::parse(must_run(*admin, "pool ls").json)->as_array().empty());

  SECTION("a client that is not client.admin may look but not change") {
    auto reader = started(f, "client.reader");
    CHECK(reader->command("pool ls")->rc == 0);
    CHECK(reader->command("pool create", {{"name", "x"}})->rc == -EACCES);
  }
  SECTION("the map survives a monitor restart") {
    must_run(*admin, "pool create", {{"name", "kept"}});
    uint64_t epoch = admin->epoch();
    admin.reset();
    f.restart();
    auto again = started(f, "client.admin");
    auto m = again->wait_for_map(epoch, 5s);
    REQUIRE(m.ok());
    CHECK((*m)->epoch == epoch);
    CHECK((*m)->pool_by_name("kept"));
  }
}

TEST_CASE("a client with a wrong or unknown key is refused", "[process][auth]") {
  MonFixture f;
  MonClientOptions o;
  o.mon_addr = f.addr();
  o.entity = "client.admin";
  o.secret = msg::Keyring::generate_secret();
  o.connect_timeout = 2s;
  MonClient wrong(o, mon_test::quiet_log());
  CHECK(!wrong.start().ok());
  o.entity = "client.stranger";
  MonClient unknown(o, mon_test::quiet_log());
  CHECK(!unknown.start().ok());

  SECTION("a key added with auth add works, and stops working after auth rm") {
    auto admin = started(f, "client.admin");
    auto add = must_run(*admin, "auth add", {{"entity", "client.new"}});
    auto k = msg::Keyring::parse(add.message, "reply");
    REQUIRE(k.ok());
    o.entity = "client.new";
    o.secret = *k->secret("client.new");
    {
      MonClient fresh(o, mon_test::quiet_log());
      REQUIRE(fresh.start().ok());
    }
    must_run(*admin, "auth rm", {{"entity", "client.new"}});
    MonClient gone(o, mon_test::quiet_log());
    CHECK(!gone.start().ok());
  }
}

TEST_CASE("garbage on the wire does not take the monitor down", "[process][robustness]") {
  MonFixture f;
  // Raw bytes that are no frame at all, before any handshake.
  for (int i = 0; i < 3; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    auto colon = f.addr().rfind(':');
    a.sin_port = htons(uint16_t(std::stoi(f.addr().substr(colon + 1))));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    std::string junk(4096, char(0x5a + i));
    CHECK(write(fd, junk.data(), junk.size()) > 0);
    close(fd);
  }
  // An authenticated peer sending a payload that is not the struct its
  // type names: that connection ends, the monitor keeps serving.
  auto bad = started(f, "client.reader");
  msg::Message m;
  m.type = msg::kMsgMonCommand;
  m.payload = std::string(64, '\xff');
  bad->send(m);
  m.type = 999;  // an unknown type is ignored
  m.payload = std::string(8, '\0');
  bad->send(m);

  auto admin = started(f, "client.admin");
  must_run(*admin, "pool create", {{"name", "still-here"}});
  CHECK(f.process().running());
  CHECK(eventually(
      [&] { return f.log_text().find("MonCommand from client.reader") != std::string::npos; }));
}

TEST_CASE("an OSD boots, gets the keys, and is marked down and out when it goes quiet",
          "[process][osd]") {
  MonFixture f(4, {{"mon_osd_down_out_interval_ms", "1500"}});
  auto admin = started(f, "client.admin");
  FakeOsd osd0(f, 0, "hostA");
  CHECK(eventually([&] { return osd0.keys().count("client.admin") == 1; }));
  osd0.boot();
  REQUIRE(eventually([&] {
    auto o = osd_in(*admin, 0);
    return o && o->up;
  }));
  const cluster::OsdInfo *o = osd_in(*admin, 0);
  CHECK(o->addr == "127.0.0.1:7000");
  CHECK(o->host == "hostA");
  CHECK(o->in);
  auto tree = must_run(*admin, "osd tree");
  CHECK(tree.message.find("hostA") != std::string::npos);

  // No beacon: down after 2 x grace (800 ms), out after the interval.
  REQUIRE(eventually([&] { return !osd_in(*admin, 0)->up; }, 5s));
  CHECK(osd_in(*admin, 0)->in);
  REQUIRE(eventually([&] { return !osd_in(*admin, 0)->in; }, 5s));

  // Booting again brings it back up and in.
  osd0.boot();
  osd0.start_beacons(false);
  REQUIRE(eventually([&] { return osd_in(*admin, 0)->up && osd_in(*admin, 0)->in; }));
  // Beacons keep it up.
  std::this_thread::sleep_for(1500ms);
  CHECK(osd_in(*admin, 0)->up);

  SECTION("an OSD whose monitor connection closes is marked down after the grace") {
    osd0.disconnect();
    REQUIRE(eventually([&] { return !osd_in(*admin, 0)->up; }, 5s));
  }
  SECTION("an operator's out sticks across a boot") {
    must_run(*admin, "osd out", {{"id", "0"}});
    osd0.boot();
    std::this_thread::sleep_for(300ms);
    CHECK(!osd_in(*admin, 0)->in);
    must_run(*admin, "osd in", {{"id", "0"}});
    CHECK(eventually([&] { return osd_in(*admin, 0)->in; }));
  }
}

TEST_CASE("peer failure reports mark an OSD down; an OSD cannot speak for another",
          "[process][osd]") {
  MonFixture f;
  auto admin = started(f, "client.admin");
  FakeOsd a(f, 1), b(f, 2);
  a.boot();
  b.boot();
  a.start_beacons(false);
  b.start_beacons(false);
  REQUIRE(eventually([&] {
    auto x = osd_in(*admin, 1), y = osd_in(*admin, 2);
    return x && y && x->up && y->up;
  }));
  REQUIRE(eventually([&] { return a.mc().epoch() == admin->epoch(); }));
  a.report_failure(2);
  REQUIRE(eventually([&] { return !osd_in(*admin, 2)->up; }));
  CHECK(osd_in(*admin, 1)->up);

  // osd.1 claiming to boot osd.3: refused, connection closed, no osd.3.
  capnp::MallocMessageBuilder mb;
  auto boot = mb.initRoot<wire::OsdBoot>();
  boot.setId(3);
  boot.setAddr("127.0.0.1:1");
  a.mc().send(msg::make_message(msg::kMsgOsdBoot, mb));
  std::this_thread::sleep_for(300ms);
  CHECK(!osd_in(*admin, 3));
  CHECK(eventually([&] { return f.log_text().find("refused") != std::string::npos; }));
}

TEST_CASE("status turns HEALTH_OK once every PG's primary reports it clean", "[process][osd]") {
  MonFixture f;
  auto admin = started(f, "client.admin");
  std::vector<std::unique_ptr<FakeOsd>> osds;
  for (int i = 0; i < 3; ++i) {
    osds.push_back(std::make_unique<FakeOsd>(f, i));
    osds.back()->boot();
    osds.back()->start_beacons(true);
  }
  REQUIRE(eventually([&] {
    auto m = admin->map();
    return m && m->osds.size() == 3;
  }));
  auto pool = must_run(*admin, "pool create", {{"name", "data"}, {"pg_num", "8"}});
  CHECK(json::parse(pool.json)->operator[]("rule").as_int() == 1);  // one host: distinct OSDs
  bool ok = eventually([&] {
    auto s = admin->command("status");
    return s.ok() && json::parse(s->json)->operator[]("health").as_string() == "HEALTH_OK";
  });
  auto s = must_run(*admin, "status");
  INFO(s.message);
  CHECK(ok);
  auto j = json::parse(s.json);
  CHECK((*j)["pgs"]["by_state"]["active+clean"].as_int() == 8);
  CHECK((*j)["osds"]["up"].as_int() == 3);
  auto pgs = json::parse(must_run(*admin, "pg ls", {{"pool", "data"}}).json);
  CHECK(pgs->as_array().size() == 8);
}

namespace {

bool osd_up(MonClient &c, int id) {
  auto m = c.map();
  const cluster::OsdInfo *o = m ? m->osd(id) : nullptr;
  return o && o->up;
}

}  // namespace

TEST_CASE(
    "an isolated OSD cannot report its peers down, and a flapping OSD is held down until "
    "unhold",
    "[process][osd]") {
  MonFixture f(3, {{"mon_osd_flap_max_markdowns", "3"}, {"mon_osd_flap_window_ms", "60000"}});
  auto admin = started(f, "client.admin");
  FakeOsd a(f, 0, "h0"), b(f, 1, "h1"), c(f, 2, "h2");
  for (FakeOsd *o : {&a, &b, &c}) {
    o->boot();
    o->start_beacons(false);
  }
  auto all_current = [&] {
    uint64_t e = admin->epoch();
    return a.mc().epoch() == e && b.mc().epoch() == e && c.mc().epoch() == e;
  };
  REQUIRE(eventually([&] { return osd_up(*admin, 0) && osd_up(*admin, 1) && osd_up(*admin, 2); }));
  REQUIRE(eventually(all_current));

  // osd.2 on its own host reports both others: one failure domain, not
  // believed over the two that still hear each other.
  c.report_failure(0);
  c.report_failure(1);
  std::this_thread::sleep_for(500ms);
  CHECK(osd_up(*admin, 0));
  CHECK(osd_up(*admin, 1));

  // The two others report osd.2 three times; each time it boots again.
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    REQUIRE(eventually(all_current));
    a.report_failure(2);
    b.report_failure(2);
    REQUIRE(eventually([&] { return !osd_up(*admin, 2); }));
    c.boot();
    if (round < 2) REQUIRE(eventually([&] { return osd_up(*admin, 2); }));
  }
  // Held: its boots are refused, and status names it.
  std::this_thread::sleep_for(500ms);
  c.boot();
  std::this_thread::sleep_for(500ms);
  CHECK_FALSE(osd_up(*admin, 2));
  auto st = must_run(*admin, "status");
  INFO(st.message);
  CHECK(json::parse(st.json)->operator[]("health").as_string() == "HEALTH_WARN");
  CHECK(st.message.find("osd.2 held down") != std::string::npos);

  // A monitor restart keeps the hold.
  f.restart();
  REQUIRE(eventually([&] { return admin->connected() && c.mc().connected(); }));
  c.boot();
  std::this_thread::sleep_for(500ms);
  CHECK_FALSE(osd_up(*admin, 2));

  // The operator lets it back.
  auto r = must_run(*admin, "osd unhold", {{"id", "osd.2"}});
  CHECK(r.message.find("released osd.2") != std::string::npos);
  c.boot();
  CHECK(eventually([&] { return osd_up(*admin, 2); }));
  auto after = must_run(*admin, "status");
  CHECK(after.message.find("held down") == std::string::npos);
}

TEST_CASE("a monitor session that gets no answer past the keepalive timeout is made again",
          "[process]") {
  MonFixture f;
  MonClientOptions o;
  o.mon_addr = f.addr();
  o.entity = "client.admin";
  o.secret = f.secret("client.admin");
  o.reconnect_interval = 100ms;
  o.connect_timeout = 1000ms;
  o.keepalive_interval = 100ms;
  o.keepalive_timeout = 600ms;
  MonClient mc(o, mon_test::quiet_log());
  std::atomic<int> connects{0};
  mc.on_connect([&] { ++connects; });
  REQUIRE(mc.start().ok());
  REQUIRE(connects == 1);
  // A monitor that answers nothing (stopped; its kernel still keeps the TCP
  // connection open, as a cut network would for a while).
  ::kill(f.process().pid(), SIGSTOP);
  bool dropped = eventually([&] { return !mc.connected(); }, 3s);
  ::kill(f.process().pid(), SIGCONT);
  CHECK(dropped);
  CHECK(eventually([&] { return mc.connected() && connects >= 2; }, 10s));
  CHECK(mc.command("status").ok());
}
