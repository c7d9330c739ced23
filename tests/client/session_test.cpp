// Service sessions (strata_session_*) against real TCP: a toy monitor that
// serves cluster maps the test builds (filesystems and MDS entries), and toy
// MDS daemons -- real msg::Messengers as mds.t / mds.u -- that echo every
// service frame back.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "cluster/cluster_map.h"
#include "cluster/map_wire.h"
#include "cluster/placement_gen.h"
#include "msg/keyring.h"
#include "msg/message_types.h"
#include "msg/messenger.h"
#include "msg/wire_codec.h"
#include "strata/client.h"

namespace {

using namespace strata;

bool wait_until(const std::function<bool()> &cond, int ms = 10000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return cond();
}

msg::SecretLookup lookup_in(std::map<std::string, std::string> keys) {
  return [keys](const std::string &e) -> std::optional<std::string> {
    auto it = keys.find(e);
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
}

// Serves the map it is given to every subscriber (full maps), answers
// every command (the client's keepalive pings) with rc 0.
class ToyMon {
 public:
  ToyMon(const std::map<std::string, std::string> &keys, Logger &log)
      : m_("mon", keys.at("mon"), lookup_in(keys), log) {
    msg::Handlers h;
    h.on_message = [this](const msg::ConnectionRef &c, msg::Message &&m) {
      if (m.type == msg::kMsgMonSubscribe) {
        std::lock_guard lk(mu_);
        subs_.push_back(c);
        c->send(full_update(map_));
      } else if (m.type == msg::kMsgMonCommand) {
        uint64_t tid = 0;
        (void)msg::read_message<wire::MonCommand>(m, "MonCommand", [&](auto r) {
          tid = r.getTid();
          return Status::OK();
        });
        capnp::MallocMessageBuilder b;
        auto r = b.initRoot<wire::MonCommandReply>();
        r.setTid(tid);
        std::lock_guard lk(mu_);
        r.setEpoch(map_.epoch);
        c->send(msg::make_message(msg::kMsgMonCommandReply, b));
      }
    };
    m_.set_handlers(std::move(h));
  }
  ~ToyMon() { m_.stop(); }

  std::string start(const cluster::ClusterMap &first) {
    map_ = first;
    auto a = m_.listen("127.0.0.1", 0);
    REQUIRE(a.ok());
    m_.start();
    return *a;
  }
  // The next epoch: `change` applied to the current map.
  void publish(const std::function<void(cluster::ClusterMap &)> &change) {
    std::lock_guard lk(mu_);
    change(map_);
    ++map_.epoch;
    for (auto &c : subs_) c->send(full_update(map_));
  }

 private:
  static msg::Message full_update(const cluster::ClusterMap &m) {
    capnp::MallocMessageBuilder b;
    auto u = b.initRoot<wire::MapUpdate>();
    cluster::to_wire(m, u.initFull());
    u.setHasFull(true);
    return msg::make_message(msg::kMsgMapUpdate, b);
  }

  msg::Messenger m_;
  std::mutex mu_;
  cluster::ClusterMap map_;
  std::vector<msg::ConnectionRef> subs_;
};

// A service daemon that echoes every frame of the service range.
class ToyMds {
 public:
  ToyMds(std::string name, const std::map<std::string, std::string> &keys, Logger &log)
      : name_(std::move(name)), keys_(keys), log_(log) {}
  ~ToyMds() { stop(); }

  // port 0: a new one; else the port of an earlier run.
  std::string start(uint16_t port = 0) {
    m_ = std::make_unique<msg::Messenger>("mds." + name_, keys_.at("mds." + name_),
                                          lookup_in(keys_), log_);
    msg::Handlers h;
    h.on_message = [this](const msg::ConnectionRef &c, msg::Message &&m) {
      ++received;
      c->send(std::move(m));
    };
    m_->set_handlers(std::move(h));
    auto a = m_->listen("127.0.0.1", port);
    REQUIRE(a.ok());
    m_->start();
    addr_ = *a;
    return addr_;
  }
  void stop() {
    if (m_) m_->stop();
    m_.reset();
  }
  uint16_t port() const { return uint16_t(std::stoi(addr_.substr(addr_.rfind(':') + 1))); }
  const std::string &addr() const { return addr_; }
  std::atomic<uint64_t> received{0};

 private:
  std::string name_;
  std::map<std::string, std::string> keys_;
  Logger &log_;
  std::unique_ptr<msg::Messenger> m_;
  std::string addr_;
};

struct Event {
  int event;
  uint32_t type;
  std::string payload;
};

// Records a session's events; optionally answers each MESSAGE with `react`.
struct Recorder {
  std::mutex mu;
  std::vector<Event> events;
  std::function<void(const Event &)> react;
  static void cb(void *arg, int event, uint32_t type, const void *p, size_t len) {
    auto *r = static_cast<Recorder *>(arg);
    Event e{event, type, std::string(static_cast<const char *>(p), len)};
    if (r->react) r->react(e);
    std::lock_guard lk(r->mu);
    r->events.push_back(std::move(e));
  }
  size_t count(int event) {
    std::lock_guard lk(mu);
    size_t n = 0;
    for (auto &e : events) n += e.event == event;
    return n;
  }
  std::vector<Event> snapshot() {
    std::lock_guard lk(mu);
    return events;
  }
};

class Cluster {
 public:
  Cluster() : t("t", keys(), log), u("u", keys(), log), mon(keys(), log) {
    char tmpl[] = "/tmp/strata-session-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    msg::Keyring ring;
    for (const auto &[e, k] : keys()) ring.set(e, k);
    REQUIRE(ring.write_file(dir_ + "/keyring").ok());
    t.start();
    u.start();
    cluster::ClusterMap m;
    m.epoch = 1;
    m.fsid = "00000000-0000-0000-0000-000000000001";
    m.placement_plugin = "crush";
    auto pm = cluster::generate_placement({}, {});
    REQUIRE(pm.ok());
    m.placement = std::move(*pm);
    m.filesystems[1] = cluster::FsInfo{1, "fs1", 1, 2, 1};
    m.filesystems[2] = cluster::FsInfo{2, "quiet", 3, 4, 1};  // no active MDS
    m.fs_max = 2;
    m.mds["t"] = cluster::MdsInfo{"t", t.addr(), cluster::MdsState::kActive, 1, 1, 1};
    m.mds["u"] = cluster::MdsInfo{"u", u.addr(), cluster::MdsState::kStandby, 0, 0, 1};
    std::string mon_addr = mon.start(m);

    std::vector<std::string> o = {"mon_addr=" + mon_addr, "keyring=" + dir_ + "/keyring",
                                  "plugin_path=" STRATA_TEST_PLUGIN_DIR};
    std::vector<const char *> ptrs;
    for (auto &s : o) ptrs.push_back(s.c_str());
    strata_cluster_args a{};
    a.struct_size = sizeof a;
    a.flags = STRATA_CLUSTER_NO_DEFAULT_CONF;
    a.entity = "client.admin";
    a.overrides = ptrs.data();
    a.n_overrides = ptrs.size();
    REQUIRE(strata_cluster_create(&a, &c) == 0);
    int rc = strata_cluster_connect(c, 10000);
    INFO(strata_last_error());
    REQUIRE(rc == 0);
  }
  ~Cluster() {
    strata_cluster_shutdown(c);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static const std::map<std::string, std::string> &keys() {
    static const std::map<std::string, std::string> k = [] {
      std::map<std::string, std::string> m;
      for (const char *e : {"mon", "client.admin", "mds.t", "mds.u"})
        m[e] = msg::Keyring::generate_secret();
      return m;
    }();
    return k;
  }

  // Makes mds.u the active MDS of fs1 (incarnation = the new epoch).
  void fail_over_to_u() {
    mon.publish([&](cluster::ClusterMap &m) {
      m.mds["t"].state = cluster::MdsState::kStandby;
      m.mds["t"].fs_id = 0;
      m.mds["u"].state = cluster::MdsState::kActive;
      m.mds["u"].fs_id = 1;
      m.mds["u"].incarnation = m.epoch + 1;
    });
  }

  Logger log{STRATA_LOG_ERROR};
  ToyMds t, u;
  ToyMon mon;
  strata_cluster_t c = nullptr;

 private:
  std::string dir_;
};

std::string status_of(strata_session_t s) {
  char buf[256];
  int64_t n = strata_session_status(s, buf, sizeof buf);
  REQUIRE(n > 0);
  REQUIRE(size_t(n) < sizeof buf);
  return std::string(buf, size_t(n));
}

}  // namespace

TEST_CASE("session: open refuses an unknown filesystem or service", "[session]") {
  Cluster cl;
  Recorder r;
  strata_session_t s = nullptr;
  CHECK(strata_session_open(cl.c, "mds", "nofs", Recorder::cb, &r, &s) == -ENOENT);
  CHECK(s == nullptr);
  CHECK(strata_session_open(cl.c, "osd", "fs1", Recorder::cb, &r, &s) == -EINVAL);
  CHECK(strata_session_open(cl.c, "mds", "fs1", nullptr, &r, &s) == -EINVAL);
  strata_session_close(nullptr);  // a no-op
}

TEST_CASE("session: connects to the active MDS and echoes; argument errors", "[session]") {
  Cluster cl;
  Recorder r;
  strata_session_t s = nullptr;
  REQUIRE(strata_session_open(cl.c, "mds", "fs1", Recorder::cb, &r, &s) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 1; }));
  CHECK(r.snapshot()[0].payload == "mds.t");
  std::string st = status_of(s);
  CHECK(st == "{\"name\":\"mds.t\",\"addr\":\"" + cl.t.addr() +
                  "\",\"connected\":true,\"reconnects\":0}");
  CHECK(strata_session_status(s, nullptr, 0) == int64_t(st.size()));

  REQUIRE(strata_session_send(s, 1024, "hello", 5) == 0);
  REQUIRE(strata_session_send(s, 2047, "", 0) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_MESSAGE) == 2; }));
  auto ev = r.snapshot();
  CHECK(ev[1].type == 1024);
  CHECK(ev[1].payload == "hello");
  CHECK(ev[2].type == 2047);
  CHECK(ev[2].payload.empty());

  CHECK(strata_session_send(s, 1023, "x", 1) == -EINVAL);
  CHECK(strata_session_send(s, 2048, "x", 1) == -EINVAL);
  CHECK(strata_session_send(s, 32, "x", 1) == -EINVAL);
  std::string big((4u << 20) + 1, 'x');
  CHECK(strata_session_send(s, 1024, big.data(), big.size()) == -EMSGSIZE);
  strata_session_close(s);

  // A filesystem without an active MDS: open succeeds, nothing connects.
  Recorder q;
  REQUIRE(strata_session_open(cl.c, "mds", "quiet", Recorder::cb, &q, &s) == 0);
  CHECK(strata_session_send(s, 1024, "x", 1) == -ENOTCONN);
  CHECK(status_of(s) == "{\"name\":\"\",\"addr\":\"\",\"connected\":false,\"reconnects\":0}");
  strata_session_close(s);
  CHECK(q.count(STRATA_SESSION_CONNECTED) == 0);
}

// The MDS client sends its Hello from the CONNECTED callback with the
// handle strata_session_open stored: a callback that ran before open
// returned found no handle, the Hello was lost and the mount waited 15 s
// for a Welcome (seen once in CI).
struct SendsOnConnect {
  strata_session_t handle = nullptr;
  std::atomic<int> connected_rc{1};
  std::atomic<int> echoes{0};
  static void cb(void *arg, int event, uint32_t, const void *, size_t) {
    auto *self = static_cast<SendsOnConnect *>(arg);
    if (event == STRATA_SESSION_CONNECTED)
      self->connected_rc = self->handle ? strata_session_send(self->handle, 1024, "hi", 2) : -1;
    else if (event == STRATA_SESSION_MESSAGE)
      ++self->echoes;
  }
};

TEST_CASE("session: the first callback may send with the handle open returned", "[session]") {
  Cluster cl;
  for (int i = 0; i < 20; ++i) {
    SendsOnConnect c;
    REQUIRE(strata_session_open(cl.c, "mds", "fs1", SendsOnConnect::cb, &c, &c.handle) == 0);
    REQUIRE(wait_until([&] { return c.echoes.load() == 1; }));
    CHECK(c.connected_rc.load() == 0);
    strata_session_close(c.handle);
  }
}

TEST_CASE("session: 10000 messages arrive in order", "[session]") {
  Cluster cl;
  Recorder r;
  strata_session_t s = nullptr;
  REQUIRE(strata_session_open(cl.c, "mds", "fs1", Recorder::cb, &r, &s) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 1; }));
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    std::string p = std::to_string(i);
    REQUIRE(strata_session_send(s, 1024 + uint32_t(i % 1024), p.data(), p.size()) == 0);
  }
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_MESSAGE) == size_t(n); }, 30000));
  auto ev = r.snapshot();
  REQUIRE(ev.size() == size_t(n) + 1);
  for (int i = 0; i < n; ++i) {
    REQUIRE(ev[size_t(i) + 1].payload == std::to_string(i));
    REQUIRE(ev[size_t(i) + 1].type == 1024 + uint32_t(i % 1024));
  }
  strata_session_close(s);
}

TEST_CASE("session: follows a failover to another MDS", "[session]") {
  Cluster cl;
  Recorder r;
  strata_session_t s = nullptr;
  REQUIRE(strata_session_open(cl.c, "mds", "fs1", Recorder::cb, &r, &s) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 1; }));
  cl.fail_over_to_u();
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 2; }));
  auto ev = r.snapshot();
  REQUIRE(ev.size() == 3);
  CHECK(ev[1].event == STRATA_SESSION_DISCONNECTED);
  CHECK(ev[2].payload == "mds.u");
  CHECK(status_of(s) == "{\"name\":\"mds.u\",\"addr\":\"" + cl.u.addr() +
                            "\",\"connected\":true,\"reconnects\":1}");
  uint64_t before = cl.u.received;
  REQUIRE(strata_session_send(s, 1500, "after", 5) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_MESSAGE) == 1; }));
  CHECK(cl.u.received == before + 1);
  strata_session_close(s);
}

TEST_CASE("session: a killed MDS is reconnected to when it is back", "[session]") {
  Cluster cl;
  Recorder r;
  strata_session_t s = nullptr;
  REQUIRE(strata_session_open(cl.c, "mds", "fs1", Recorder::cb, &r, &s) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 1; }));
  uint16_t port = cl.t.port();
  cl.t.stop();
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_DISCONNECTED) == 1; }));
  CHECK(strata_session_send(s, 1024, "x", 1) == -ENOTCONN);
  // The map still names mds.t: the session keeps trying (with back-off)
  // until it answers again at its address.
  cl.t.start(port);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 2; }));
  REQUIRE(strata_session_send(s, 1024, "back", 4) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_MESSAGE) == 1; }));
  CHECK(r.snapshot().back().payload == "back");
  strata_session_close(s);
}

TEST_CASE("session: close from another thread while messages flow", "[session]") {
  Cluster cl;
  Recorder r;
  std::atomic<bool> closed{false};
  std::atomic<int> after_close{0};
  std::atomic<strata_session_t> handle{nullptr};
  // Every echo is sent again from the callback: traffic never stops.
  r.react = [&](const Event &e) {
    if (closed) ++after_close;
    if (e.event == STRATA_SESSION_MESSAGE)
      (void)strata_session_send(handle.load(), e.type, e.payload.data(), e.payload.size());
  };
  strata_session_t s = nullptr;
  REQUIRE(strata_session_open(cl.c, "mds", "fs1", Recorder::cb, &r, &s) == 0);
  handle = s;
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_CONNECTED) == 1; }));
  for (int i = 0; i < 16; ++i) REQUIRE(strata_session_send(s, 1024, "ping", 4) == 0);
  REQUIRE(wait_until([&] { return r.count(STRATA_SESSION_MESSAGE) >= 2000; }));
  std::thread closer([&] {
    strata_session_close(s);
    closed = true;
  });
  closer.join();
  size_t n = r.snapshot().size();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(after_close == 0);
  CHECK(r.snapshot().size() == n);
}

TEST_CASE("session: close from the session's own callback", "[session]") {
  Cluster cl;
  Recorder r;
  std::atomic<strata_session_t> handle{nullptr};
  std::atomic<int> calls_after{0};
  std::atomic<bool> closed{false};
  // Only the callback uses the handle: once it closes it, it is gone.
  r.react = [&](const Event &e) {
    if (closed) ++calls_after;
    while (!handle.load()) std::this_thread::yield();  // open() has not returned yet
    if (e.event == STRATA_SESSION_CONNECTED)
      for (int i = 0; i < 100; ++i) (void)strata_session_send(handle.load(), 1024, "x", 1);
    if (e.event == STRATA_SESSION_MESSAGE && !closed) {
      closed = true;
      strata_session_close(handle.load());
    }
  };
  strata_session_t s = nullptr;
  REQUIRE(strata_session_open(cl.c, "mds", "fs1", Recorder::cb, &r, &s) == 0);
  handle = s;
  REQUIRE(wait_until([&] { return closed.load(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(calls_after == 0);
  CHECK(r.count(STRATA_SESSION_MESSAGE) == 1);
}

TEST_CASE("session: fs and MDS entries survive the map codec, full and incremental", "[session]") {
  cluster::ClusterMap a;
  a.epoch = 7;
  a.fsid = "f";
  a.filesystems[1] = cluster::FsInfo{1, "fs1", 1, 2, 3};
  a.filesystems[2] = cluster::FsInfo{2, "gone", 3, 4, 5};
  a.fs_max = 2;
  a.mds["t"] = cluster::MdsInfo{"t", "127.0.0.1:1", cluster::MdsState::kActive, 1, 6, 4};
  a.mds["old"] = cluster::MdsInfo{"old", "127.0.0.1:2", cluster::MdsState::kStandby, 0, 0, 2};
  auto full = cluster::decode_map(cluster::encode_map(a));
  REQUIRE(full.ok());
  CHECK(*full == a);

  cluster::ClusterMap b = a;
  b.epoch = 8;
  b.filesystems.erase(2);
  b.filesystems[3] = cluster::FsInfo{3, "fs3", 5, 6, 8};
  b.fs_max = 3;
  b.mds.erase("old");
  b.mds["t"].state = cluster::MdsState::kReplay;
  b.mds["u"] = cluster::MdsInfo{"u", "127.0.0.1:3", cluster::MdsState::kActive, 3, 8, 8};
  auto inc = cluster::apply_incremental(a, cluster::encode_incremental(a, b));
  REQUIRE(inc.ok());
  CHECK(*inc == b);
  CHECK(inc->active_mds(3)->name == "u");
  CHECK(inc->active_mds(1) == nullptr);
}
