#include "cli/cmd_client_common.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/config.h"
#include "common/config_lookup.h"
#include "common/json.h"

namespace strata::cli {

Result<std::optional<std::string>> ArgList::take(const std::string &flag, const std::string &alias) {
  for (size_t i = 0; i < args_.size(); ++i) {
    const std::string &a = args_[i];
    for (const std::string &f : {flag, alias}) {
      if (f.empty()) continue;
      if (a == f) {
        if (i + 1 >= args_.size()) return Status::Error(EINVAL, f + " needs a value");
        std::string v = args_[i + 1];
        args_.erase(args_.begin() + long(i), args_.begin() + long(i) + 2);
        return std::optional<std::string>(std::move(v));
      }
      if (f.size() > 2 && a.size() > f.size() && a.compare(0, f.size() + 1, f + "=") == 0) {
        std::string v = a.substr(f.size() + 1);
        args_.erase(args_.begin() + long(i));
        return std::optional<std::string>(std::move(v));
      }
    }
  }
  return std::optional<std::string>();
}

bool ArgList::take_flag(const std::string &flag, const std::string &alias) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == flag || (!alias.empty() && args_[i] == alias)) {
      args_.erase(args_.begin() + long(i));
      return true;
    }
  }
  return false;
}

Result<std::vector<std::string>> ArgList::positional() const {
  for (const std::string &a : args_)
    if (a.size() > 1 && a[0] == '-' && a != "-" && !(a.size() > 1 && std::isdigit(uint8_t(a[1]))))
      return Status::Error(EINVAL, "unknown option " + a);
  return args_;
}

Result<CommonOptions> take_common_options(ArgList &args) {
  CommonOptions o;
  auto str = [&](const char *flag, const char *alias, std::string *out) -> Status {
    auto v = args.take(flag, alias);
    if (!v.ok()) return v.status();
    if (*v) *out = **v;
    return Status::OK();
  };
  if (Status s = str("--conf", "-c", &o.conf); !s.ok()) return s;
  if (o.conf.empty())
    if (Status s = str("--config", "", &o.conf); !s.ok()) return s;
  if (Status s = str("--name", "-n", &o.name); !s.ok()) return s;
  if (Status s = str("--keyring", "-k", &o.keyring); !s.ok()) return s;
  if (Status s = str("--mon-addr", "", &o.mon_addr); !s.ok()) return s;
  for (;;) {
    auto v = args.take("--set");
    if (!v.ok()) return v.status();
    if (!*v) break;
    if ((*v)->find('=') == std::string::npos)
      return Status::Error(EINVAL, "--set expects key=value, got '" + **v + "'");
    o.sets.push_back(**v);
  }
  std::string format, timeout;
  if (Status s = str("--format", "-f", &format); !s.ok()) return s;
  if (!format.empty()) {
    auto f = parse_output_format(format);
    if (!f.ok()) return f.status();
    o.format = *f;
  }
  if (Status s = str("--timeout", "", &timeout); !s.ok()) return s;
  if (!timeout.empty()) {
    auto ms = parse_duration_ms(timeout);
    if (!ms.ok()) return ms.status().Context("--timeout");
    if (*ms == 0) return Status::Error(EINVAL, "--timeout must be more than 0");
    o.timeout_ms = uint32_t(std::min<uint64_t>(*ms, UINT32_MAX));
    o.op_timeout_ms = o.timeout_ms;
  }
  o.help = args.take_flag("--help", "-h");
  return o;
}

const char *common_options_help() {
  return "common options:\n"
         "  --conf FILE        config file (default: $STRATA_CONF, else ./strata.conf)\n"
         "  --name client.X    entity to connect as (default: client_name, else client.admin)\n"
         "  --keyring FILE     keyring with the entity's key (default: the config's keyring)\n"
         "  --mon-addr H:P     monitor address (default: the config's mon_addr)\n"
         "  --set key=value    override a config key (repeatable)\n"
         "  --format F         text (default), json or json-pretty\n"
         "  --timeout SECONDS  how long to wait for the cluster: to connect (default 10) and\n"
         "                     for each operation (default 30); on expiry the command says\n"
         "                     what it waited for and exits 1\n";
}

Result<uint64_t> parse_bytes(const std::string &s) {
  if (s.empty()) return Status::Error(EINVAL, "empty size");
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno || v < 0) return Status::Error(EINVAL, "bad size '" + s + "'");
  std::string suffix(end);
  double mult = 1;
  if (suffix.empty() || suffix == "B" || suffix == "b") mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KiB" || suffix == "KB") mult = 1024.0;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB" || suffix == "MB") mult = 1048576.0;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB" || suffix == "GB") mult = 1073741824.0;
  else return Status::Error(EINVAL, "bad size suffix in '" + s + "' (K, M or G)");
  double bytes = v * mult;
  if (bytes != std::floor(bytes) || bytes > 1e18)
    return Status::Error(EINVAL, "size '" + s + "' is not a whole number of bytes");
  return uint64_t(bytes);
}

Result<uint64_t> parse_duration_ms(const std::string &s) {
  if (s.empty()) return Status::Error(EINVAL, "empty duration");
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno || v < 0) return Status::Error(EINVAL, "bad duration '" + s + "'");
  std::string suffix(end);
  double ms;
  if (suffix.empty() || suffix == "s") ms = v * 1000;
  else if (suffix == "ms") ms = v;
  else if (suffix == "m" || suffix == "min") ms = v * 60000;
  else return Status::Error(EINVAL, "bad duration suffix in '" + s + "' (s, ms or m)");
  return uint64_t(std::llround(ms));
}

Result<std::pair<uint32_t, uint32_t>> parse_pgid(const std::string &s) {
  size_t dot = s.find('.');
  auto bad = [&] { return Status::Error(EINVAL, "bad PG id '" + s + "' (POOL.SEED, e.g. 1.2f)"); };
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return bad();
  char *end = nullptr;
  std::string pool = s.substr(0, dot), seed = s.substr(dot + 1);
  unsigned long p = std::strtoul(pool.c_str(), &end, 10);
  if (*end || p > UINT32_MAX) return bad();
  unsigned long q = std::strtoul(seed.c_str(), &end, 16);
  if (*end || q > UINT32_MAX) return bad();
  return std::make_pair(uint32_t(p), uint32_t(q));
}

std::string json_quote(const std::string &s) { return json::quote(s); }

Status api_error(int rc, const std::string &what) {
  const char *msg = strata_last_error();
  return Status::Error(rc, what + (msg && *msg ? std::string(": ") + msg : ""));
}

Status object_error(int rc, strata_ioctx_t io, const std::string &oid) {
  Status st = api_error(rc, oid);
  if (rc != -ETIMEDOUT) return st;
  strata_object_location loc{};
  loc.struct_size = sizeof loc;
  if (strata_object_locate(io, oid.c_str(), &loc) != 0) return st;
  char pg[32];
  std::snprintf(pg, sizeof pg, "%u.%x", loc.pool, loc.seed);
  std::string acting;
  for (uint32_t i = 0; i < loc.n_acting; ++i)
    acting += (i ? "," : "") + std::to_string(loc.acting[i]);
  std::string where = loc.primary < 0 ? "no OSD serves its pg " + std::string(pg)
                                      : "waited for osd." + std::to_string(loc.primary) +
                                            ", primary of pg " + pg + " (acting [" + acting + "])";
  return Status::Error(rc,
                       st.message() + "; " + where + ", map epoch " + std::to_string(loc.epoch));
}

int fail(const std::string &cmd, const Status &st) {
  std::fprintf(stderr, "strata %s: %s\n", cmd.c_str(), st.ToString().c_str());
  return 1;
}

int usage_error(const std::string &cmd, const std::string &msg, const char *usage) {
  std::fprintf(stderr, "strata %s: %s\n%s", cmd.c_str(), msg.c_str(), usage);
  return 2;
}

Result<std::unique_ptr<Session>> Session::open(const CommonOptions &o) {
  // Without a config the library would only say what is missing from it
  // (no keyring, no mon_addr); say instead that there is none, and how to
  // point at one.
  ConfigLocation where = locate_config(o.conf);
  if (where.path.empty() && o.mon_addr.empty())
    return Status::Error(ENOENT, "no config file found: " + where.looked_at +
                                     ". Point at one with --conf FILE or export "
                                     "STRATA_CONF=FILE (`strata up --dir D` writes "
                                     "D/strata.conf), or give --mon-addr HOST:PORT and "
                                     "--keyring FILE");
  std::unique_ptr<Session> s(new Session());
  std::vector<std::string> overrides = o.sets;
  // Every operation of a command ends: after --timeout (default 30 s)
  // unless --set client_op_timeout_ms=... says otherwise.
  bool op_timeout_set = false;
  for (const std::string &x : o.sets) op_timeout_set |= x.rfind("client_op_timeout_ms=", 0) == 0;
  if (!op_timeout_set)
    overrides.push_back("client_op_timeout_ms=" + std::to_string(o.op_timeout_ms));
  if (!o.keyring.empty()) overrides.push_back("keyring=" + o.keyring);
  if (!o.mon_addr.empty()) overrides.push_back("mon_addr=" + o.mon_addr);
  std::vector<const char *> ptrs;
  for (const std::string &x : overrides) ptrs.push_back(x.c_str());
  strata_cluster_args a{};
  a.struct_size = sizeof a;
  a.conf_path = o.conf.empty() ? nullptr : o.conf.c_str();
  a.entity = o.name.empty() ? nullptr : o.name.c_str();
  a.overrides = ptrs.data();
  a.n_overrides = ptrs.size();
  if (int rc = strata_cluster_create(&a, &s->cluster_); rc < 0)
    return api_error(rc, "configuration");
  if (int rc = strata_cluster_connect(s->cluster_, o.timeout_ms); rc < 0)
    return api_error(rc, "connecting to the cluster");
  return s;
}

Session::~Session() {
  for (auto &[name, io] : ioctxs_) strata_ioctx_destroy(io);
  strata_cluster_shutdown(cluster_);
}

Result<strata_ioctx_t> Session::ioctx(const std::string &pool) {
  for (auto &[name, io] : ioctxs_)
    if (name == pool) return io;
  strata_ioctx_t io = nullptr;
  if (int rc = strata_ioctx_create(cluster_, pool.c_str(), &io); rc < 0)
    return api_error(rc, "pool " + pool);
  ioctxs_.emplace_back(pool, io);
  return io;
}

int Session::mon_command(const std::string &prefix,
                         const std::vector<std::pair<std::string, std::string>> &args,
                         OutputFormat f) {
  std::vector<strata_cmd_arg> a;
  for (const auto &[k, v] : args) a.push_back({k.c_str(), v.c_str()});
  char *msg = nullptr, *json = nullptr;
  size_t msg_len = 0, json_len = 0;
  int rc = strata_mon_command(cluster_, prefix.c_str(), a.data(), a.size(), &msg, &msg_len, &json,
                              &json_len);
  std::string message = msg ? std::string(msg, msg_len) : "";
  std::string j = json ? std::string(json, json_len) : "";
  strata_buffer_free(msg);
  strata_buffer_free(json);
  if (rc < 0) {
    std::fprintf(stderr, "strata %s: %s\n", prefix.c_str(), strata_last_error());
    return 1;
  }
  if (f == OutputFormat::kText) {
    if (message.empty()) message = pretty_json(j);
    std::fwrite(message.data(), 1, message.size(), stdout);
    if (!message.empty() && message.back() != '\n') std::fputc('\n', stdout);
  } else {
    print_json(j.empty() ? "{}" : j, f);
  }
  return 0;
}

}  // namespace strata::cli
