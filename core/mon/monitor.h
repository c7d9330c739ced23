// The monitor daemon's core: owns the map store and the messenger, keeps
// the current cluster map, and
//  - answers MonSubscribe with the map (incrementals from the subscriber's
//    epoch when it has them, else the full map) and pushes every new epoch's
//    incremental to every subscriber;
//  - sends AuthUpdate (every key) to osd.* / mon subscribers that ask for it,
//    again whenever a key changes;
//  - handles OsdBoot (creates unknown OSDs, marks them up with their
//    address), OsdFailure reports, OsdStats beacons, MonCommand;
//  - marks OSDs down (peer reports from enough failure domains, see
//    osd_failure_policy.h; no beacon for 2 x grace; its mon connection gone
//    for longer than the grace), holds a flapping OSD down (its boots are
//    refused until `osd unhold` or the hold times out), and out (down longer than
//    down_out_interval_ms; an OSD that comes back is marked in again unless
//    an operator marked it out).
// Every change is one new epoch committed to the MapStore before anyone
// hears of it.
//
// Threading: handlers run on the messenger's I/O thread, the down/out
// timers on a thread of their own; one mutex guards the state. Messages
// are sent after the state mutex is released, in commit order (a send
// mutex is taken before the state mutex is let go); connection ends are
// queued and handled by the next holder of the state mutex, so a send that
// closes a connection never waits for it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cluster/cluster_map.h"
#include "common/env.h"
#include "common/log.h"
#include "host/plugin_loader.h"
#include "mon/map_store.h"
#include "mon/mon_commands.h"
#include "mon/osd_failure_policy.h"

namespace strata::mon {

struct MonitorOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 6789;
  uint64_t heartbeat_grace_ms = 3000;
  uint64_t down_out_interval_ms = 600000;  // 0: never mark out automatically
  uint64_t mds_beacon_grace_ms = 3000;     // an MDS silent this long leaves the map
  // Peer reports needed (from how many failure domains) and flap holds.
  FailurePolicyOptions failure;
  PoolDefaults pool_defaults;
  cluster::FullRatios full_ratios;
  uint64_t tick_ms = 0;  // timer period; 0: grace / 10, within [10, 500]
};

class Monitor {
 public:
  // Writes epoch 1 into an empty store: `fsid`, no OSDs, no pools, the
  // placement plugin's name, and `keys` (entity -> secret) as the auth
  // database.
  static Status mkfs(MapStore &store, const std::string &fsid,
                     const std::map<std::string, std::string> &keys,
                     const std::string &placement_plugin, uint64_t now_ms);

  // A fresh cluster id: a random UUID ("8-4-4-4-12" hex).
  static std::string new_fsid();

  // Loads the last epoch from `store`. `placement` must be the plugin the
  // map names (it maps PGs for status and pg ls). Every time the monitor
  // judges (beacons, reports, down and out, flap holds) is read from
  // env's clock; `env` must outlive the monitor.
  static Result<std::unique_ptr<Monitor>> open(MonitorOptions opts, std::unique_ptr<MapStore> store,
                                               host::Plugin placement, Logger &log, Env &env);
  ~Monitor();  // stops

  // Listens on host:port and starts the timers; returns the bound address.
  Result<std::string> start();
  // Closes every connection and joins the threads. Idempotent.
  void stop();

  // The current map. Thread-safe.
  std::shared_ptr<const cluster::MapView> current() const;

 private:
  struct State;
  explicit Monitor(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace strata::mon
