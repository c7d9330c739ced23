#include "osd/osd_config.h"

#include <unistd.h>

#include <algorithm>
#include <climits>

#include "cluster/fullness.h"
#include "cluster/options.h"

namespace strata::osd {

namespace {

std::string value_of(const Config &cfg, const std::string &entity, const char *key) {
  for (const auto *list : {&cluster::global_options(), &cluster::osd_options()})
    for (const strata_option_spec &s : *list)
      if (std::string(s.name) == key) return config_value(cfg, entity, s);
  return cfg.get(entity, key).value_or("");
}

Result<long long> int_of(const Config &cfg, const std::string &entity, const char *key,
                         long long min, long long max) {
  std::string v = value_of(cfg, entity, key);
  auto n = parse_size(v);
  if (!n.ok()) return Status::Error(EINVAL, std::string(key) + ": " + n.status().message());
  if (*n < min || *n > max)
    return Status::Error(EINVAL, std::string(key) + " = " + v + " is out of range [" +
                                     std::to_string(min) + ", " + std::to_string(max) + "]");
  return *n;
}

}  // namespace

Result<OsdConfig> load_osd_config(const Config &cfg, int32_t id) {
  OsdConfig c;
  std::string entity = "osd." + std::to_string(id);
  c.id = id;
  c.fsid = value_of(cfg, entity, "fsid");
  c.mon_addr = value_of(cfg, entity, "mon_addr");
  c.keyring = value_of(cfg, entity, "keyring");
  c.store_dir = cfg.get(entity, "store_dir").value_or("");
  c.addr = value_of(cfg, entity, "osd_addr");
  c.host = value_of(cfg, entity, "osd_host");
  auto failsafe = cluster::parse_ratio("osd_failsafe_full_ratio",
                                       value_of(cfg, entity, "osd_failsafe_full_ratio"));
  if (!failsafe.ok()) return failsafe.status();
  c.failsafe_full_ratio = *failsafe;
  auto full = cluster::parse_ratio("osd_full_ratio", value_of(cfg, entity, "osd_full_ratio"));
  if (!full.ok()) return full.status();
  c.full_ratio = std::min(*full, c.failsafe_full_ratio);
  if (c.host.empty()) {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) == 0) c.host = buf;
    if (c.host.empty()) c.host = "localhost";
  }
  struct IntKey {
    const char *key;
    long long min, max;
    long long *out;
  };
  long long hb = 0, grace = 0, port = 0, threads = 0, msg_threads = 0, stage_threads = 0, rec = 0, log_entries = 0,
            ka_interval = 0, ka_timeout = 0;
  for (IntKey k : {IntKey{"heartbeat_interval_ms", 10, 3600000, &hb},
                   IntKey{"heartbeat_grace_ms", 20, 36000000, &grace},
                   IntKey{"osd_port", 0, 65535, &port}, IntKey{"osd_op_threads", 1, 64, &threads},
                   IntKey{"osd_msg_threads", 1, 64, &msg_threads},
                   IntKey{"osd_stage_threads", 1, 64, &stage_threads},
                   IntKey{"osd_recovery_max_active", 1, 1024, &rec},
                   IntKey{"osd_pg_log_entries", 10, 10000000, &log_entries},
                   IntKey{"mon_keepalive_interval_ms", 0, 3600000, &ka_interval},
                   IntKey{"mon_keepalive_timeout_ms", 100, 36000000, &ka_timeout}}) {
    auto v = int_of(cfg, entity, k.key, k.min, k.max);
    if (!v.ok()) return v.status();
    *k.out = *v;
  }
  c.heartbeat_interval_ms = hb;
  c.heartbeat_grace_ms = grace;
  c.mon_keepalive_interval_ms = ka_interval;
  c.mon_keepalive_timeout_ms = ka_timeout;
  c.port = static_cast<uint16_t>(port);
  c.op_threads = static_cast<int>(threads);
  c.msg_threads = static_cast<int>(msg_threads);
  c.stage_threads = static_cast<int>(stage_threads);
  c.recovery_max_active = static_cast<int>(rec);
  c.pg_log_entries = static_cast<int>(log_entries);
  if (c.store_dir.empty())
    return Status::Error(EINVAL, "osd." + std::to_string(id) + ": no store_dir in the config");
  return c;
}

std::vector<std::string> cluster_keys_for_osd() {
  std::vector<std::string> keys;
  for (const auto *list : {&cluster::global_options(), &cluster::osd_options()})
    for (const strata_option_spec &s : *list) keys.push_back(s.name);
  return keys;
}

}  // namespace strata::osd
