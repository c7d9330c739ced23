// The monitor's administrative commands, as pure functions of the current
// state: each returns the reply and, for a mutating command, the change to
// commit (a proposed next map and/or auth and meta changes). The monitor
// commits the change as one epoch and only then sends the reply, so a
// reply with rc 0 means the change is durable.
//
// Commands (MonCommand prefix; named args):
//   ping                                    "pong" (the keepalive of monitor sessions)
//   status                                  cluster summary
//   osd tree | osd ls
//   osd out|in|down      id                 (id: "3" or "osd.3")
//   osd reweight         id weight          (weight: e.g. 1.0, 0.5)
//   osd unhold           id                 lets an OSD held down for flapping boot again
//   pool create          name [size] [min_size] [pg_num] [rule]
//   pool rm|get          name
//   pool set             name key value     (key: size, min_size, rule)
//   pool ls
//   pg ls                [pool]             (name or id; all pools if absent)
//   auth add|rm          entity             (add replies with the new key)
//   auth ls
//   fs new|rm|ls|status                     filesystems (fs_commands.h)
// Mutating commands are refused (EACCES) unless the caller is client.admin.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "cluster/cluster_map.h"
#include "common/json.h"
#include "mon/mds_tracker.h"
#include "mon/osd_failure_policy.h"
#include "mon/pg_stats.h"

namespace strata::mon {

struct CommandRequest {
  std::string prefix;
  std::map<std::string, std::string> args;
  std::string entity;  // who asks ("client.admin")
};

struct CommandReply {
  int rc = 0;  // 0 or negative errno
  std::string message;
  json::Value json;
};

// What a command changes.
struct CommandEffect {
  std::optional<cluster::ClusterMap> next;                 // epoch and placement set by the monitor
  std::map<std::string, std::optional<std::string>> auth;  // entity -> secret / erase
  std::map<std::string, std::optional<std::string>> meta;
  bool empty() const { return !next && auth.empty() && meta.empty(); }
};

struct PoolDefaults {
  uint32_t size = 3, min_size = 2, pg_num = 32;
};

// What commands read.
struct CommandState {
  std::shared_ptr<const cluster::MapView> view;
  const PgStatsTable *stats = nullptr;
  const std::map<std::string, std::string> *auth = nullptr;
  std::set<int32_t> admin_out;  // OSDs an operator marked out
  PoolDefaults defaults;
  std::map<int32_t, FlapGuard::Hold> flap_holds;  // OSDs held down for flapping
  uint64_t flap_hold_ms = 0;                      // how long a hold lasts (0: until unhold)
  const std::map<std::string, MdsStats> *mds_stats = nullptr;  // last beacon figures by name
};

// The meta key holding admin_out ("3,7"), and its codec.
constexpr const char *kMetaAdminOut = "osd_admin_out";
std::set<int32_t> parse_id_set(const std::string &text);
std::string format_id_set(const std::set<int32_t> &ids);

CommandReply run_command(const CommandRequest &req, const CommandState &state,
                         CommandEffect *effect);

// Whether `prefix` names a command that changes state.
bool is_mutating(const std::string &prefix);

// Parses "3" or "osd.3"; -1 if neither.
int32_t parse_osd_id(const std::string &s);

}  // namespace strata::mon
