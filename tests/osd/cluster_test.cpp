// The OSD on real processes: a monitor and three `strata osd` (kv backend)
// started with `strata up`, driven through the client C API and, for
// exactly-once, through raw messages.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <random>
#include <mutex>
#include <set>
#include <thread>

#include "cluster/cluster_map.h"
#include "common/config.h"
#include "mon/mon_client.h"
#include "msg/keyring.h"
#include "msg/message_types.h"
#include "msg/messenger.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"
#include "osd/types.h"
#include "osd_cluster.h"
#include "osd_test_support.h"
#include "store_check.h"
#include "strata/client.h"

using namespace strata;
using namespace strata::osdtest;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

#define SKIP_UNLESS_UP(c)                                 \
  do {                                                    \
    if (!(c).ok()) {                                      \
      WARN("skipped: cannot start a cluster here: " << (c).why_not()); \
      return;                                             \
    }                                                     \
  } while (0)

std::string payload(const std::string &name, size_t size = 4096) {
  std::string s;
  while (s.size() < size) s += name + "|";
  s.resize(size);
  return s;
}

// Writes objects w0, w1, ... through aio at a fixed depth, remembering the
// ones acknowledged and when.
class Writer {
 public:
  Writer(strata_ioctx_t io, std::string prefix, int depth = 8)
      : io_(io), prefix_(std::move(prefix)), depth_(depth) {
    thread_ = std::thread([this] { run(); });
  }
  ~Writer() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t acked() const { return n_acked_.load(); }
  int errors() const { return errors_.load(); }
  bool drained() const { return drained_; }
  std::map<std::string, std::string> acked_objects() {
    std::lock_guard lk(mu_);
    return acked_;
  }
  // The longest time without an acknowledgement after `from`.
  std::chrono::milliseconds longest_gap_after(Clock::time_point from) {
    std::lock_guard lk(mu_);
    Clock::time_point prev = from;
    Clock::duration gap{};
    for (auto t : times_) {
      if (t < from) continue;
      gap = std::max(gap, t - prev);
      prev = t;
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(gap);
  }

 private:
  struct Slot {
    strata_completion_t c = nullptr;
    std::string oid, data;
  };
  void run() {
    std::vector<Slot> slots(static_cast<size_t>(depth_));
    uint64_t next = 0;
    auto finish = [&](Slot &s) {
      int64_t rc = strata_completion_get_return_value(s.c);
      strata_completion_release(s.c);
      s.c = nullptr;
      if (rc < 0) {
        errors_++;
        return;
      }
      std::lock_guard lk(mu_);
      acked_[s.oid] = s.data;
      times_.push_back(Clock::now());
      n_acked_++;
    };
    while (!stop_) {
      for (Slot &s : slots) {
        if (s.c && !strata_completion_is_complete(s.c)) continue;
        if (s.c) finish(s);
        s.oid = prefix_ + std::to_string(next++);
        s.data = payload(s.oid);
        REQUIRE(strata_completion_create(nullptr, nullptr, &s.c) == 0);
        REQUIRE(strata_aio_write_full(io_, s.oid.c_str(), s.c, s.data.data(), s.data.size()) == 0);
      }
      std::this_thread::sleep_for(200us);
    }
    // Every write in flight still gets its answer.
    auto deadline = Clock::now() + 60s;
    for (Slot &s : slots) {
      while (s.c && !strata_completion_is_complete(s.c) && Clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
      if (s.c && strata_completion_is_complete(s.c)) finish(s);
    }
    drained_ = std::all_of(slots.begin(), slots.end(), [](const Slot &s) { return !s.c; });
  }

  strata_ioctx_t io_;
  std::string prefix_;
  int depth_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> n_acked_{0};
  std::atomic<int> errors_{0};
  bool drained_ = false;
  std::mutex mu_;
  std::map<std::string, std::string> acked_;
  std::vector<Clock::time_point> times_;
  std::thread thread_;
};

bool wait_for(const std::function<bool()> &cond, std::chrono::milliseconds timeout) {
  auto end = Clock::now() + timeout;
  while (Clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return cond();
}

std::string read_object(strata_ioctx_t io, const std::string &oid, size_t max = 1 << 20) {
  std::string buf(max, '\0');
  int64_t n = strata_read(io, oid.c_str(), buf.data(), buf.size(), 0);
  if (n < 0) return "<error " + std::to_string(n) + ">";
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace

TEST_CASE("acknowledged writes survive kill -9 of an OSD and every replica agrees after it returns") {
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);

  std::map<std::string, std::string> acked;
  {
    Writer w(io, "w");
    REQUIRE(wait_for([&] { return w.acked() >= 200; }, 30s));
    uint64_t at_kill = w.acked();
    auto t_kill = Clock::now();
    cl.kill_osd(1);
    // size 3, min_size 2: writes carry on once the monitor marks it down.
    INFO("writes did not resume after osd.1 was killed");
    REQUIRE(wait_for([&] { return w.acked() >= at_kill + 300; }, 60s));
    WARN("longest pause in acknowledged writes after kill -9: " << w.longest_gap_after(t_kill).count()
                                                               << " ms (heartbeat grace 1000 ms)");
    w.stop();
    CHECK(w.drained());
    CHECK(w.errors() == 0);
    acked = w.acked_objects();
  }
  cl.start_osd(1);
  cl.wait_clean();
  for (const auto &[oid, data] : acked) {
    INFO("object " << oid);
    REQUIRE(read_object(io, oid) == data);
  }
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);

  // Behind the OSDs' backs: every copy of every PG is the same, and (size 3
  // on 3 OSDs) every OSD holds every acknowledged object.
  for (int i = 0; i < 3; ++i) cl.stop_osd(i);
  require_replicas_identical(cl, {0, 1, 2}, acked);
}

TEST_CASE("writes wait while fewer than min_size copies are up and go through when one returns") {
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  std::string before = payload("before");
  REQUIRE(strata_write_full(io, "obj", before.data(), before.size()) == 0);
  cl.kill_osd(1);
  cl.kill_osd(2);
  std::string out;
  REQUIRE(wait_for([&] {
    return cl.cli("status --format json", &out) == 0 && out.find("\"up\":1,") != std::string::npos;
  }, 30s));
  strata_completion_t comp = nullptr;
  REQUIRE(strata_completion_create(nullptr, nullptr, &comp) == 0);
  std::string after = payload("after");
  REQUIRE(strata_aio_write_full(io, "obj", comp, after.data(), after.size()) == 0);
  std::this_thread::sleep_for(3s);
  CHECK_FALSE(strata_completion_is_complete(comp));  // one copy is not enough to acknowledge
  cl.start_osd(1);
  REQUIRE(wait_for([&] { return strata_completion_is_complete(comp) != 0; }, 60s));
  CHECK(strata_completion_get_return_value(comp) == 0);
  strata_completion_release(comp);
  cl.start_osd(2);
  cl.wait_clean();
  CHECK(read_object(io, "obj") == after);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("deep scrub finds corrupted replicas and repair restores them from the good copies") {
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  // Objects until two share a PG: one gets corrupted on a replica, the other
  // on the primary.
  std::map<uint32_t, std::vector<std::string>> by_pg;
  strata_object_location loc{};
  std::string a, b;
  for (int i = 0; i < 200 && a.empty(); ++i) {
    std::string oid = "s" + std::to_string(i);
    std::string d = payload(oid);
    REQUIRE(strata_write_full(io, oid.c_str(), d.data(), d.size()) == 0);
    strata_object_location l{};
    l.struct_size = sizeof l;
    REQUIRE(strata_object_locate(io, oid.c_str(), &l) == 0);
    auto &v = by_pg[l.seed];
    v.push_back(oid);
    if (v.size() == 2) {
      a = v[0];
      b = v[1];
      loc = l;
    }
  }
  REQUIRE(!a.empty());
  REQUIRE(loc.n_acting == 3);
  int primary = loc.acting[0], replica = loc.acting[1];
  std::string coll = osd::coll_name(osd::PgId{loc.pool, loc.seed});
  auto corrupt = [&](int osd_id, const std::string &oid) {
    cl.stop_osd(osd_id);
    corrupt_object(cl, osd_id, coll, oid);  // bits flipped; size and version unchanged
    cl.start_osd(osd_id);
  };
  corrupt(replica, a);
  corrupt(primary, b);
  cl.wait_clean();

  auto pg_command = [&](uint32_t flags, std::string *json) {
    char *msg = nullptr, *js = nullptr;
    int rc = strata_pg_command(c, loc.pool, loc.seed, flags, &msg, nullptr, &js, nullptr);
    INFO("message: " << (msg ? msg : "") << " json: " << (js ? js : ""));
    *json = js ? js : "";
    strata_buffer_free(msg);
    strata_buffer_free(js);
    return rc;
  };
  std::string json;
  REQUIRE(pg_command(STRATA_PG_SCRUB_DEEP, &json) == 0);
  INFO(json);
  CHECK(json.find("{\"oid\":\"" + a + "\",\"bad_osds\":[" + std::to_string(replica) + "]") != std::string::npos);
  CHECK(json.find("{\"oid\":\"" + b + "\",\"bad_osds\":[" + std::to_string(primary) + "]") != std::string::npos);
  CHECK(json.find("\"reason\":\"digest mismatch\"") != std::string::npos);

  REQUIRE(pg_command(STRATA_PG_REPAIR, &json) == 0);
  CHECK(json.find("\"repaired\":2") != std::string::npos);
  REQUIRE(pg_command(STRATA_PG_SCRUB_DEEP, &json) == 0);
  CHECK(json.find("\"inconsistent\":[]") != std::string::npos);
  CHECK(read_object(io, a) == payload(a));
  CHECK(read_object(io, b) == payload(b));
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

namespace {

// A bare client speaking OpRequest to OSDs, to resend the same tid on
// purpose.
class RawClient {
 public:
  RawClient(const OsdCluster &cl) {
    auto cfg = Config::load_file(cl.conf());
    REQUIRE(cfg.ok());
    auto kr = msg::Keyring::load_file(*cfg->get("client.admin", "keyring"));
    REQUIRE(kr.ok());
    secret_ = *kr->secret("client.admin");
    mon::MonClientOptions mo;
    mo.mon_addr = *cfg->get("client.admin", "mon_addr");
    mo.entity = "client.admin";
    mo.secret = secret_;
    mon_ = std::make_unique<mon::MonClient>(mo, quiet_logger());
    REQUIRE(mon_->start().ok());
    messenger_ = std::make_unique<msg::Messenger>("client.admin", secret_, nullptr, quiet_logger());
    msg::Handlers h;
    h.on_message = [this](const msg::ConnectionRef &, msg::Message &&m) {
      std::lock_guard lk(mu_);
      replies_.push_back(std::move(m));
      cv_.notify_all();
    };
    messenger_->set_handlers(h);
    messenger_->start();
  }
  ~RawClient() {
    messenger_->stop();
    mon_->stop();
  }

  std::shared_ptr<const cluster::MapView> view(uint64_t min_epoch = 0) {
    auto m = mon_->wait_for_map(std::max<uint64_t>(1, min_epoch), std::chrono::milliseconds(30000));
    REQUIRE(m.ok());
    auto plugin = registry().find(STRATA_KIND_PLACEMENT, (*m)->placement_plugin);
    REQUIRE(plugin.ok());
    auto v = cluster::MapView::create(**m, *plugin);
    REQUIRE(v.ok());
    return *v;
  }

  struct Reply {
    int32_t rc = 0;
    uint64_t version = 0, retry_epoch = 0;
    bool replayed = false;
  };
  // Sends an append of `data` to `oid` with `tid` to the primary of the
  // given map and waits for the answer.
  Reply append(const cluster::MapView &v, const std::string &oid, uint64_t tid, const std::string &data) {
    uint32_t pool = v.map().pool_by_name("data")->id;
    auto pg = v.pg_of(pool, oid);
    int32_t primary = v.primary(pg);
    REQUIRE(primary >= 0);
    auto conn = messenger_->connect(v.map().osd(primary)->addr);
    REQUIRE(conn.ok());
    capnp::MallocMessageBuilder b;
    auto r = b.initRoot<wire::OpRequest>();
    r.setTid(tid);
    r.setClient("client.admin.rawtest");
    r.setPool(pool);
    r.setSeed(pg.seed);
    r.setOid(oid);
    r.setMapEpoch(v.epoch());
    r.setIsWrite(true);
    auto ops = r.initOps(1);
    ops[0].setCode(wire::OpCode::APPEND);
    ops[0].setDataSeg(0);
    {
      std::lock_guard lk(mu_);
      replies_.clear();
    }
    REQUIRE((*conn)->send(msg::make_message(msg::kMsgOpRequest, b, {data})));
    std::unique_lock lk(mu_);
    REQUIRE(cv_.wait_for(lk, 30s, [&] { return !replies_.empty(); }));
    Reply out;
    Status st = msg::read_message<wire::OpReply>(replies_.front(), "OpReply", [&](wire::OpReply::Reader rr) {
      out.rc = rr.getRc();
      out.version = rr.getVersion();
      out.retry_epoch = rr.getRetryEpoch();
      out.replayed = rr.getReplayed();
      return Status::OK();
    });
    REQUIRE(st.ok());
    (*conn)->close("done");
    return out;
  }

 private:
  std::string secret_;
  std::unique_ptr<mon::MonClient> mon_;
  std::unique_ptr<msg::Messenger> messenger_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<msg::Message> replies_;
};

}  // namespace

TEST_CASE("a resent write is applied exactly once, also by a new primary after the old one dies") {
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  RawClient raw(cl);
  auto v = raw.view();
  const std::string oid = "once";
  auto first = raw.append(*v, oid, 1, "abc");
  REQUIRE(first.rc == 0);
  CHECK_FALSE(first.replayed);
  auto again = raw.append(*v, oid, 1, "abc");  // the reply was "lost": same tid again
  REQUIRE(again.rc == 0);
  CHECK(again.replayed);
  CHECK(again.version == first.version);

  uint32_t pool = v->map().pool_by_name("data")->id;
  int32_t old_primary = v->primary(v->pg_of(pool, oid));
  cl.kill_osd(old_primary);
  std::shared_ptr<const cluster::MapView> v2;
  REQUIRE(wait_for([&] {
    v2 = raw.view(v->epoch() + 1);
    const cluster::OsdInfo *o = v2->map().osd(old_primary);
    return o && !o->up;
  }, 30s));
  REQUIRE(v2->primary(v2->pg_of(pool, oid)) != old_primary);
  // The new primary learnt the reqid from the replicated log entry.
  auto third = raw.append(*v2, oid, 1, "abc");
  REQUIRE(third.rc == 0);
  CHECK(third.replayed);
  auto next = raw.append(*v2, oid, 2, "def");
  REQUIRE(next.rc == 0);
  CHECK_FALSE(next.replayed);

  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  CHECK(read_object(io, oid) == "abcdef");
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("a primary killed after every replica has a write durable but before the ack: the "
          "client's resend is applied exactly once") {
  // Every OSD carries the fault: whichever is primary for `oid` dies the
  // moment the write is durable on all copies, before it answers. The new
  // primary answers the resend from the replicated PG log, never through
  // that path, so it survives.
  const std::string oid = "killed-before-ack";
  OsdCluster cl(3, {"failpoints=osd.write_durable_before_ack@" + oid + "=kill"});
  SKIP_UNLESS_UP(cl);
  RawClient raw(cl);
  auto v = raw.view();
  uint32_t pool = v->map().pool_by_name("data")->id;
  int32_t primary = v->primary(v->pg_of(pool, oid));
  REQUIRE(cl.osd_pid(primary) > 0);

  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  // An append is not idempotent: applied twice, the object would read
  // "abcabc".
  auto t0 = std::chrono::steady_clock::now();
  int rc = strata_append(io, oid.c_str(), "abc", 3);
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  REQUIRE(rc == 0);
  std::printf("append acknowledged %lld ms after the primary osd.%d killed itself\n",
              static_cast<long long>(waited.count()), primary);
  CHECK(cl.osd_pid(primary) == 0);  // it really died, the ack came from another OSD
  {
    std::ifstream log(cl.dir() + "/osd." + std::to_string(primary) + ".log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK(text.find("failpoint osd.write_durable_before_ack (" + oid + ") fires: kill -9") !=
          std::string::npos);
  }
  auto v2 = raw.view(v->epoch() + 1);
  CHECK(v2->primary(v2->pg_of(pool, oid)) != primary);
  CHECK(read_object(io, oid) == "abc");

  // The old primary comes back, catches up, and every copy holds it once.
  cl.start_osd(primary);
  cl.wait_clean();
  CHECK(read_object(io, oid) == "abc");
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}

TEST_CASE("an OSD that never comes back is marked out and its PGs are backfilled to the others") {
  // A short PG log, so the OSDs new to a PG cannot catch up from the log
  // alone: they are backfilled (and some of them are the new primaries).
  OsdCluster cl(4, {"osd_pg_log_entries=10"});
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  std::map<std::string, std::string> written;
  for (int i = 0; i < 400; ++i) {
    std::string oid = "b" + std::to_string(i);
    std::string d = payload(oid, 1000 + i);
    REQUIRE(strata_write_full(io, oid.c_str(), d.data(), d.size()) == 0);
    written[oid] = d;
  }
  // Some objects get xattrs and omap too: backfill copies whole objects.
  for (int i = 0; i < 400; i += 37) {
    std::string oid = "b" + std::to_string(i);
    REQUIRE(strata_setxattr(io, oid.c_str(), "k", "v", 1) == 0);
    strata_bytes key{"key", 3}, val{"val", 3};
    REQUIRE(strata_omap_set(io, oid.c_str(), &key, &val, 1) == 0);
  }
  cl.kill_osd(3);
  std::string out;
  REQUIRE(cl.cli("osd out 3", &out) == 0);
  // Writes during the backfill land too.
  for (int i = 400; i < 450; ++i) {
    std::string oid = "b" + std::to_string(i);
    std::string d = payload(oid);
    REQUIRE(strata_write_full(io, oid.c_str(), d.data(), d.size()) == 0);
    written[oid] = d;
  }
  cl.wait_clean();
  for (const auto &[oid, data] : written) {
    INFO("object " << oid);
    REQUIRE(read_object(io, oid) == data);
  }
  char xv[8] = {};
  CHECK(strata_getxattr(io, "b37", "k", xv, sizeof xv) == 1);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
  for (int i = 0; i < 3; ++i) cl.stop_osd(i);
  require_replicas_identical(cl, {0, 1, 2}, written);
}

TEST_CASE("large full-object writes on XFS OSDs are staged on arrival: every replica agrees and "
          "no abandoned stage is left behind") {
  // The OSDs stage a write_full of 128 KiB and more (the store's
  // stage_threshold) on their StagePool as the op or RepOp arrives; the PG
  // then binds that stage. Small ops sent behind a large one on the same
  // connection must still reach the PG after it, and a large write whose
  // guard fails drops its stage at once (ABI 1.2 stage_release).
  OsdCluster cl(3, {}, "xfs");
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);

  std::map<std::string, std::string> written;
  // Asynchronous, one connection per OSD: on each object a large write_full
  // is followed at once by a small append, which the OSD must not apply
  // before the large write it was sent after.
  struct Pending {
    strata_completion_t c;
    std::string data;
  };
  std::vector<Pending> pending;
  for (int i = 0; i < 24; ++i) {
    std::string oid = "big" + std::to_string(i);
    std::string big = payload(oid, (1 << 20) + 4096 * i + i);
    std::string tail = "|tail" + std::to_string(i);
    strata_completion_t c1 = nullptr, c2 = nullptr;
    REQUIRE(strata_completion_create(nullptr, nullptr, &c1) == 0);
    REQUIRE(strata_completion_create(nullptr, nullptr, &c2) == 0);
    REQUIRE(strata_aio_write_full(io, oid.c_str(), c1, big.data(), big.size()) == 0);
    REQUIRE(strata_aio_append(io, oid.c_str(), c2, tail.data(), tail.size()) == 0);
    pending.push_back({c1, big});
    pending.push_back({c2, tail});
    written[oid] = big + tail;
  }
  for (Pending &p : pending) {
    CHECK(strata_completion_wait(p.c) == 0);
    strata_completion_release(p.c);
  }
  // A large write behind a guard that fails: staged on arrival, abandoned.
  for (int i = 0; i < 6; ++i) {
    std::string oid = "big" + std::to_string(i);
    std::string other = payload("never", 512 << 10);
    strata_write_op_t op = strata_write_op_new();
    REQUIRE(op);
    strata_write_op_cmpxattr(op, "missing", STRATA_CMP_EQ, "x", 1);
    strata_write_op_write_full(op, other.data(), other.size());
    CHECK(strata_write_op_operate(op, io, oid.c_str(), nullptr) == -ECANCELED);
    strata_write_op_release(op);
  }
  for (const auto &[oid, data] : written) {
    std::string got = read_object(io, oid, 4 << 20);
    INFO("object " << oid << ": read " << got.size() << " bytes, wrote " << data.size()
                   << ", ends with '" << got.substr(got.size() > 12 ? got.size() - 12 : 0) << "'");
    REQUIRE((got == data));
  }
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);

  for (int i = 0; i < 3; ++i) cl.stop_osd(i);
  // A clean stop checkpoints, which drops every consumed stage; an abandoned
  // one would stay until the next open swept it.
  for (int i = 0; i < 3; ++i) {
    std::string stage_dir = cl.store_dir(i) + "/backend/stage";
    size_t left = 0;
    for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator(stage_dir)) ++left;
    INFO("stage files left in " << stage_dir);
    CHECK(left == 0);
  }
  require_replicas_identical(cl, {0, 1, 2}, written);
}

TEST_CASE("plain writes to one object in flight together land in the order they were sent, on "
          "every replica, with appends and full writes between them") {
  // The primary lets a plain write follow the previous write to its object
  // without waiting for it to settle (block images put many small writes
  // into few objects); an append needs the size and still waits. Whatever
  // overtakes whom on the way, every copy must end up as if the ops ran
  // one by one in the order the client sent them.
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);

  std::map<std::string, std::string> model;
  std::vector<strata_completion_t> pending;
  std::mt19937 rng(13);
  for (int obj = 0; obj < 3; ++obj) {
    const std::string oid = "pipe" + std::to_string(obj);
    std::string &m = model[oid];
    for (int i = 0; i < 150; ++i) {
      strata_completion_t cp = nullptr;
      REQUIRE(strata_completion_create(nullptr, nullptr, &cp) == 0);
      const std::string tag = oid + "#" + std::to_string(i);
      if (i % 40 == 39) {
        std::string d = payload(tag, 1000);
        REQUIRE(strata_aio_append(io, oid.c_str(), cp, d.data(), d.size()) == 0);
        m += d;
      } else if (i % 50 == 25) {
        std::string d = payload(tag, 64 << 10);
        REQUIRE(strata_aio_write_full(io, oid.c_str(), cp, d.data(), d.size()) == 0);
        m = d;
      } else {
        // Overlapping 4 KiB writes somewhere in the first 192 KiB.
        uint64_t off = (rng() % (192 << 10)) & ~uint64_t(511);
        std::string d = payload(tag, 4096);
        REQUIRE(strata_aio_write(io, oid.c_str(), cp, d.data(), d.size(), off) == 0);
        if (m.size() < off + d.size()) m.resize(off + d.size(), '\0');
        m.replace(off, d.size(), d);
      }
      pending.push_back(cp);
    }
  }
  for (strata_completion_t cp : pending) {
    CHECK(strata_completion_wait(cp) == 0);
    strata_completion_release(cp);
  }
  for (const auto &[oid, data] : model) {
    std::string got = read_object(io, oid, 1 << 20);
    INFO("object " << oid << ": " << got.size() << " bytes read, " << data.size() << " expected");
    REQUIRE((got == data));
  }
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
  for (int i = 0; i < 3; ++i) cl.stop_osd(i);
  require_replicas_identical(cl, {0, 1, 2}, model);
}

namespace {

// One write op on oid: snap context `seq` (0: none), then a full write of
// `data` (or, data empty, a remove).
void snap_write(strata_ioctx_t io, const std::string &oid, uint64_t seq, const std::string &data) {
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_snap_context(op, seq);
  if (data.empty()) strata_write_op_remove(op);
  else strata_write_op_write_full(op, data.data(), data.size());
  INFO("write of " << oid << " with snap context " << seq);
  REQUIRE(strata_write_op_operate(op, io, oid.c_str(), nullptr) == 0);
  strata_write_op_release(op);
}

// The object's data at snapshot `snap`; "<absent>" when it did not exist.
std::string read_at(strata_ioctx_t io, const std::string &oid, uint64_t snap) {
  std::string buf(64 << 10, '\0');
  size_t got = 0;
  int rval = 0;
  strata_read_op_t op = strata_read_op_new();
  strata_read_op_set_snap(op, snap);
  strata_read_op_read(op, 0, buf.size(), buf.data(), &got, &rval);
  int rc = strata_read_op_operate(op, io, oid.c_str(), nullptr);
  strata_read_op_release(op);
  if (rc == -ENOENT) return "<absent>";
  INFO("read of " << oid << " at snapshot " << snap);
  REQUIRE(rc == 0);
  buf.resize(got);
  return buf;
}

}  // namespace

TEST_CASE("object snapshots: clones reach every replica, an OSD that was down gets the clones and "
          "trims it missed, and listings never show them") {
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  // model[oid][snap]: what each snapshot of each object reads (0: the head).
  std::map<std::string, std::map<uint64_t, std::string>> model;
  const int kObjects = 24;
  auto oid_of = [](int i) { return "snap" + std::to_string(i); };
  for (int i = 0; i < kObjects; ++i) {
    std::string d = payload(oid_of(i) + "v0", 3000 + i);
    snap_write(io, oid_of(i), 0, d);
    model[oid_of(i)][0] = d;
  }
  // Snapshot 1 with every OSD up.
  for (int i = 0; i < kObjects; ++i) {
    std::string d = payload(oid_of(i) + "v1", 2000 + i);
    snap_write(io, oid_of(i), 1, d);
    model[oid_of(i)][1] = model[oid_of(i)][0];
    model[oid_of(i)][0] = d;
  }
  // osd.2 away: snapshot 2 clones, half the objects trim snapshot 1, a
  // third are removed (their clones stay), and new objects appear.
  cl.kill_osd(2);
  for (int i = 0; i < kObjects; ++i) {
    auto &m = model[oid_of(i)];
    std::string d = i % 3 == 0 ? std::string() : payload(oid_of(i) + "v2", 1000 + i);
    snap_write(io, oid_of(i), 2, d);
    m[2] = m[0];
    m[0] = d.empty() ? "<absent>" : d;
    if (i % 2 == 0) {
      strata_write_op_t op = strata_write_op_new();
      uint64_t keep[] = {2};
      strata_write_op_snap_trim(op, keep, 1);
      REQUIRE(strata_write_op_operate(op, io, oid_of(i).c_str(), nullptr) == 0);
      strata_write_op_release(op);
      m.erase(1);  // no longer a snapshot: nothing to check
    }
  }
  snap_write(io, "snapnew", 2, "born after snapshot 2");
  model["snapnew"][0] = "born after snapshot 2";
  model["snapnew"][2] = "<absent>";
  cl.start_osd(2);
  cl.wait_clean();

  for (const auto &[oid, snaps] : model)
    for (const auto &[snap, data] : snaps) {
      INFO("object " << oid << " snapshot " << snap);
      CHECK(read_at(io, oid, snap) == data);
    }
  // The listing shows heads only.
  strata_list_t l = nullptr;
  REQUIRE(strata_list_open(io, nullptr, &l) == 0);
  std::set<std::string> listed;
  const char *name = nullptr;
  size_t len = 0;
  while (strata_list_next(l, &name, &len) == 1) listed.insert(std::string(name, len));
  strata_list_close(l);
  std::set<std::string> heads;
  std::map<std::string, std::string> head_data;
  for (const auto &[oid, snaps] : model)
    if (snaps.at(0) != "<absent>") {
      heads.insert(oid);
      head_data[oid] = snaps.at(0);
    }
  CHECK(listed == heads);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
  // Every copy holds the same clones and snap sets (osd.2 got the ones
  // made and dropped while it was away).
  for (int i = 0; i < 3; ++i) cl.stop_osd(i);
  require_replicas_identical(cl, {0, 1, 2}, head_data);
}

TEST_CASE(
    "an OSD past its own osd_full_ratio refuses client writes and has the map mark it "
    "full, whatever the monitor's ratio") {
  // The monitor keeps its full ratio (0.95: these disks are far from it),
  // the OSDs get a tiny osd_full_ratio: only their own count can refuse.
  // Before, a burst of writes ran on past the full ratio until the
  // monitor's flag came back through the map, into the share between it
  // and the failsafe ratio that the MDS's journal needs.
  OsdCluster cl(3);
  SKIP_UNLESS_UP(cl);
  strata_cluster_t c = cl.connect();
  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create(c, "data", &io) == 0);
  const std::string before = payload("before");
  REQUIRE(strata_write_full(io, "kept", before.data(), before.size()) == 0);
  {
    std::ofstream conf(cl.conf(), std::ios::app);
    conf << "\n[osd]\nosd_full_ratio = 0.000001\n";
  }
  for (int i = 0; i < 3; ++i) {
    cl.stop_osd(i);
    cl.start_osd(i);
  }
  cl.wait_clean();
  std::string out;
  const std::string more = payload("more");
  CHECK(strata_write_full(io, "refused", more.data(), more.size()) == -ENOSPC);
  // The OSDs say so in their reports (a heartbeat interval): health names
  // them, though their disks are far from the monitor's ratio.
  CHECK(wait_for(
      [&] {
        return cl.cli("status", &out) == 0 &&
               out.find("full osd(s) refuse writes") != std::string::npos;
      },
      20s));
  // Deletes still go through; what was written before reads back.
  CHECK(read_object(io, "kept") == before);
  CHECK(strata_remove(io, "kept") == 0);
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(c);
}
