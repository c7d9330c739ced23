#include "client/client_settings.h"

#include <algorithm>
#include <cctype>

#include "cluster/options.h"
#include "common/log.h"
#include "msg/keyring.h"

namespace strata::client {

std::vector<const strata_option_spec *> client_option_specs() {
  std::vector<const strata_option_spec *> specs;
  for (const auto &s : cluster::global_options()) specs.push_back(&s);
  for (const auto &s : cluster::client_options()) specs.push_back(&s);
  for (const auto &s : core_store_options()) {
    std::string n = s.name;
    if (n == "plugin_path" || n == "log_level") specs.push_back(&s);
  }
  return specs;
}

bool valid_client_entity(const std::string &entity) {
  // Programs connect as client.NAME; a metadata server's own cluster client
  // connects as its daemon entity, mds.NAME (the key it has).
  std::string prefix = "client.";
  if (entity.compare(0, 4, "mds.") == 0) prefix = "mds.";
  if (entity.size() <= prefix.size() || entity.compare(0, prefix.size(), prefix) != 0) return false;
  return std::all_of(entity.begin() + static_cast<long>(prefix.size()), entity.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

Result<std::string> resolve_client_entity(const Config &cfg, const std::string &requested) {
  std::string entity = requested;
  if (entity.empty()) entity = cfg.get("client", "client_name").value_or("client.admin");
  if (!valid_client_entity(entity))
    return Status::Error(EINVAL, "bad client entity '" + entity +
                                     "' (expected client.NAME, NAME of letters, digits, _ - .)");
  return entity;
}

namespace {

const strata_option_spec *find_spec(const std::vector<const strata_option_spec *> &specs,
                                    const std::string &key) {
  for (const strata_option_spec *s : specs)
    if (key == s->name) return s;
  return nullptr;
}

}  // namespace

Result<ClientSettings> load_client_settings(const Config &cfg, const std::string &entity) {
  if (!valid_client_entity(entity))
    return Status::Error(EINVAL, "bad client entity '" + entity + "' (expected client.NAME)");
  auto specs = client_option_specs();
  std::string problems;
  for (const Config::Entry &e : cfg.effective(entity)) {
    const strata_option_spec *spec = find_spec(specs, e.key);
    // Overrides, [client], [client.NAME]. A metadata server's cluster client
    // shares its daemon's config and overrides, whose own check validates
    // the daemon's keys.
    bool daemon = entity.compare(0, 4, "mds.") == 0;
    bool ours = e.section != "global" && !daemon;
    if (!spec) {
      if (ours)
        problems += (problems.empty() ? "" : "\n") + e.origin + ": unknown client option '" +
                    e.key + "'";
      continue;
    }
    Status st = validate_value(*spec, e.value);
    if (!st.ok()) problems += (problems.empty() ? "" : "\n") + e.origin + ": " + st.message();
  }
  if (!problems.empty()) return Status::Error(EINVAL, problems);

  auto value = [&](const char *key) {
    return config_value(cfg, entity, *find_spec(specs, key));
  };
  auto number = [&](const char *key) -> long long {
    auto n = parse_size(value(key));
    return n.ok() ? *n : 0;  // validated above
  };
  ClientSettings s;
  s.entity = entity;
  s.mon_addr = value("mon_addr");
  s.keyring_path = value("keyring");
  s.key_base64 = value("key");
  s.op_timeout = std::chrono::milliseconds(number("client_op_timeout_ms"));
  s.connect_timeout = std::chrono::milliseconds(std::max(100LL, number("client_connect_timeout_ms")));
  s.mon_keepalive_interval = std::chrono::milliseconds(number("mon_keepalive_interval_ms"));
  s.mon_keepalive_timeout =
      std::chrono::milliseconds(std::max(100LL, number("mon_keepalive_timeout_ms")));
  s.io_threads = static_cast<int>(std::clamp(number("client_io_threads"), 1LL, 64LL));
  s.plugin_path = value("plugin_path");
  s.log_file = value("log_file");
  // A library should be quiet in its host program: warnings and errors only,
  // unless the configuration asks for more.
  if (auto lvl = cfg.get(entity, "log_level")) s.log_level = Logger::parse_level(*lvl);
  if (s.mon_addr.empty()) return Status::Error(EINVAL, "no mon_addr configured for " + entity);
  return s;
}

Result<std::string> load_client_secret(const ClientSettings &s) {
  if (!s.key_base64.empty()) {
    auto ring = msg::Keyring::parse("[" + s.entity + "]\nkey = " + s.key_base64 + "\n", "option key");
    if (!ring.ok()) return ring.status().Context("the 'key' option of " + s.entity);
    auto secret = ring->secret(s.entity);
    if (!secret) return Status::Error(EINVAL, "the 'key' option of " + s.entity + " is empty");
    return *secret;
  }
  if (s.keyring_path.empty())
    return Status::Error(ENOENT, "no keyring configured for " + s.entity +
                                     " (set keyring = FILE or key = BASE64)");
  auto ring = msg::Keyring::load_file(s.keyring_path);
  if (!ring.ok()) return ring.status();
  auto secret = ring->secret(s.entity);
  if (!secret) return Status::Error(ENOENT, "no key for " + s.entity + " in " + s.keyring_path);
  return *secret;
}

}  // namespace strata::client
