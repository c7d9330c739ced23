// The monitor in-process on a FakeClock (common/env.h): its beacon grace
// and down-out interval are judged on the Env's clock, so a test moves
// time on by ten minutes instead of waiting for it.
#include <capnp/message.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <thread>

#include "cluster/map_wire.h"
#include "common/env.h"
#include "mon/map_store.h"
#include "mon/mon_client.h"
#include "mon/monitor.h"
#include "mon_test_support.h"
#include "msg/keyring.h"
#include "msg/message_types.h"
#include "msg/wire_codec.h"

using namespace strata;
using namespace std::chrono_literals;
using mon_test::eventually;

namespace {

// A monitor on `clock` with a fresh map store, listening on a free port.
class ClockedMonitor {
 public:
  ClockedMonitor(FakeClock &clock, mon::MonitorOptions opts) : dir_("clock"), env_(clock) {
    keys_["mon"] = msg::Keyring::generate_secret();
    keys_["client.admin"] = msg::Keyring::generate_secret();
    keys_["osd.0"] = msg::Keyring::generate_secret();
    auto store = mon::open_rocks_map_store(dir_ / "mon", {.create = true});
    REQUIRE(store.ok());
    REQUIRE(mon::Monitor::mkfs(**store, mon::Monitor::new_fsid(), keys_, "crush", clock.wall_ms())
                .ok());
    opts.host = "127.0.0.1";
    opts.port = 0;
    auto m =
        mon::Monitor::open(opts, std::move(*store), mon_test::crush(), mon_test::quiet_log(), env_);
    REQUIRE(m.ok());
    mon_ = std::move(*m);
    auto addr = mon_->start();
    REQUIRE(addr.ok());
    addr_ = *addr;
  }

  std::unique_ptr<mon::MonClient> client(const std::string &entity) {
    mon::MonClientOptions o;
    o.mon_addr = addr_;
    o.entity = entity;
    o.secret = keys_.at(entity);
    o.reconnect_interval = 100ms;
    auto c = std::make_unique<mon::MonClient>(o, mon_test::quiet_log());
    Status s = c->start();
    INFO(s.message());
    REQUIRE(s.ok());
    return c;
  }

  // A copy: the map it comes from may be replaced at any time.
  std::optional<cluster::OsdInfo> osd(int id) const {
    auto view = mon_->current();
    const cluster::OsdInfo *o = view->map().osd(id);
    return o ? std::optional<cluster::OsdInfo>(*o) : std::nullopt;
  }

 private:
  mon_test::TempDir dir_;
  Env env_;
  std::map<std::string, std::string> keys_;
  std::string addr_;
  std::unique_ptr<mon::Monitor> mon_;
};

void boot(mon::MonClient &mc, int id) {
  capnp::MallocMessageBuilder b;
  auto m = b.initRoot<wire::OsdBoot>();
  m.setId(id);
  m.setAddr("127.0.0.1:" + std::to_string(7000 + id));
  m.setHost("hostA");
  m.setWeight(0x10000);
  REQUIRE(mc.send(msg::make_message(msg::kMsgOsdBoot, b)));
}

// Moves the clock on in steps the monitor's ticks (every 10 ms) see one by
// one: time passing while it runs, not a stall of its own.
void pass_time(FakeClock &clock, std::chrono::milliseconds total) {
  for (auto left = total; left.count() > 0; left -= 200ms) {
    clock.advance(std::min<std::chrono::milliseconds>(left, 200ms));
    std::this_thread::sleep_for(30ms);
  }
}

}  // namespace

TEST_CASE("the monitor marks a silent OSD down and out by its Env's clock, not the machine's",
          "[mon][clock]") {
  FakeClock clock;
  mon::MonitorOptions opts;
  opts.heartbeat_grace_ms = 3000;
  opts.down_out_interval_ms = 600000;  // ten minutes, as in production
  opts.tick_ms = 10;
  ClockedMonitor mon(clock, opts);
  auto osd0 = mon.client("osd.0");
  REQUIRE(eventually([&] { return osd0->connected(); }));
  boot(*osd0, 0);
  REQUIRE(eventually([&] { return mon.osd(0) && mon.osd(0)->up; }));

  // No beacon ever comes; the OSD is down once the clock is two graces on.
  pass_time(clock, 6200ms);
  REQUIRE(eventually([&] { return !mon.osd(0)->up; }));
  CHECK(mon.osd(0)->in);
  const uint64_t down_at = mon.osd(0)->down_since_ms;
  CHECK(down_at > clock.wall_ms() - 400);

  // Out after the interval: ten minutes of fake time, none of real time
  // (one jump: a stall of the monitor does not excuse being down).
  clock.advance(600001ms);
  REQUIRE(eventually([&] { return !mon.osd(0)->in; }));
  CHECK(mon.osd(0)->down_since_ms == down_at);
}

TEST_CASE("a monitor that did not run for a while blames nobody for the silence", "[mon][clock]") {
  FakeClock clock;
  mon::MonitorOptions opts;
  opts.heartbeat_grace_ms = 3000;
  opts.tick_ms = 10;
  ClockedMonitor mon(clock, opts);
  auto osd0 = mon.client("osd.0");
  REQUIRE(eventually([&] { return osd0->connected(); }));
  boot(*osd0, 0);
  REQUIRE(eventually([&] { return mon.osd(0) && mon.osd(0)->up; }));
  // Ten seconds in one step between two ticks: the whole machine stopped
  // (nobody could beacon), not the OSD.
  clock.advance(10000ms);
  std::this_thread::sleep_for(200ms);
  CHECK(mon.osd(0)->up);
  // Silence while the monitor runs still counts: two graces later, down.
  pass_time(clock, 6400ms);
  REQUIRE(eventually([&] { return !mon.osd(0)->up; }));
}
