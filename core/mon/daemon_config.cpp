#include "mon/daemon_config.h"

#include <cstdlib>
#include <vector>

#include "cluster/fullness.h"
#include "cluster/options.h"
#include "msg/keyring.h"

namespace strata::mon {

namespace {

const strata_option_spec *find_spec(const std::string &key) {
  for (const auto *list :
       {&cluster::global_options(), &cluster::mon_options(), &cluster::osd_options(),
        &cluster::client_options(), &core_store_options()})
    for (const strata_option_spec &s : *list)
      if (key == s.name) return &s;
  return nullptr;
}

}  // namespace

Result<std::pair<std::string, uint16_t>> parse_host_port(const std::string &addr) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= addr.size())
    return Status::Error(EINVAL, "bad address '" + addr + "' (expected host:port)");
  char *end = nullptr;
  unsigned long port = std::strtoul(addr.c_str() + colon + 1, &end, 10);
  if (*end || port > 65535) return Status::Error(EINVAL, "bad port in address '" + addr + "'");
  std::string host = addr.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::make_pair(host, uint16_t(port));
}

Status validate_cluster_config(const Config &cfg, const std::string &entity) {
  std::vector<const strata_option_spec *> specs;
  for (const auto *list :
       {&cluster::global_options(), &cluster::mon_options(), &cluster::osd_options(),
        &cluster::client_options(), &core_store_options()})
    for (const strata_option_spec &s : *list) specs.push_back(&s);
  return validate_config(cfg, entity, specs);
}

std::string config_str(const Config &cfg, const std::string &entity, const std::string &key) {
  const strata_option_spec *spec = find_spec(key);
  if (!spec) return cfg.get(entity, key).value_or("");
  return config_value(cfg, entity, *spec);
}

Result<long long> config_int(const Config &cfg, const std::string &entity, const std::string &key) {
  std::string v = config_str(cfg, entity, key);
  auto n = parse_size(v);
  if (!n.ok()) return n.status().Context("option " + key);
  return n;
}

Result<MonClientOptions> mon_client_options(const Config &cfg, const std::string &entity) {
  MonClientOptions o;
  o.entity = entity;
  o.mon_addr = config_str(cfg, entity, "mon_addr");
  std::string keyring = config_str(cfg, entity, "keyring");
  if (keyring.empty())
    return Status::Error(
        EINVAL, "no keyring configured for " + entity + " (set keyring = FILE in [global])");
  auto k = msg::Keyring::load_file(keyring);
  if (!k.ok()) return k.status();
  auto secret = k->secret(entity);
  if (!secret) return Status::Error(ENOENT, "keyring " + keyring + " has no key for " + entity);
  o.secret = *secret;
  return o;
}

Result<MonitorOptions> monitor_options(const Config &cfg) {
  MonitorOptions o;
  auto addr = parse_host_port(config_str(cfg, "mon", "mon_addr"));
  if (!addr.ok()) return addr.status().Context("mon_addr");
  o.host = addr->first;
  o.port = addr->second;
  struct IntOpt {
    const char *key;
    long long min;
    long long *out;
  };
  long long grace, mds_grace, out_ms, reporters, size, min_size, pg_num, flap_n, flap_window, flap_hold;
  for (IntOpt i : {IntOpt{"heartbeat_grace_ms", 10, &grace},
                   IntOpt{"mds_beacon_grace_ms", 10, &mds_grace},
                   IntOpt{"mon_osd_down_out_interval_ms", 0, &out_ms},
                   IntOpt{"mon_osd_min_down_reporters", 1, &reporters},
                   IntOpt{"mon_default_pool_size", 1, &size},
                   IntOpt{"mon_default_pool_min_size", 1, &min_size},
                   IntOpt{"mon_default_pg_num", 1, &pg_num},
                   IntOpt{"mon_osd_flap_max_markdowns", 0, &flap_n},
                   IntOpt{"mon_osd_flap_window_ms", 1, &flap_window},
                   IntOpt{"mon_osd_flap_hold_ms", 0, &flap_hold}}) {
    auto v = config_int(cfg, "mon", i.key);
    if (!v.ok()) return v.status();
    if (*v < i.min)
      return Status::Error(EINVAL,
                           std::string(i.key) + " must be at least " + std::to_string(i.min));
    *i.out = *v;
  }
  o.heartbeat_grace_ms = uint64_t(grace);
  o.down_out_interval_ms = uint64_t(out_ms);
  o.mds_beacon_grace_ms = uint64_t(mds_grace);
  o.failure.min_down_reporters = uint32_t(reporters);
  o.failure.reporter_level = config_str(cfg, "mon", "mon_osd_reporter_subtree_level");
  if (o.failure.reporter_level.empty())
    return Status::Error(EINVAL, "mon_osd_reporter_subtree_level must name a placement type "
                                 "(host, root, ...) or osd");
  o.failure.flap_max_markdowns = uint32_t(flap_n);
  o.failure.flap_window_ms = uint64_t(flap_window);
  o.failure.flap_hold_ms = uint64_t(flap_hold);
  o.pool_defaults.size = uint32_t(size);
  o.pool_defaults.min_size = uint32_t(std::min(min_size, size));
  o.pool_defaults.pg_num = uint32_t(pg_num);
  struct RatioOpt {
    const char *key;
    double *out;
  };
  for (RatioOpt r : {RatioOpt{"mon_osd_nearfull_ratio", &o.full_ratios.nearfull},
                     RatioOpt{"mon_osd_backfillfull_ratio", &o.full_ratios.backfillfull},
                     RatioOpt{"mon_osd_full_ratio", &o.full_ratios.full}}) {
    auto v = cluster::parse_ratio(r.key, config_str(cfg, "mon", r.key));
    if (!v.ok()) return v.status();
    *r.out = *v;
  }
  if (Status s = cluster::check_ratios(o.full_ratios); !s.ok()) return s;
  return o;
}

}  // namespace strata::mon
