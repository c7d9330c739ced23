// `strata status`, `strata osd tree|ls|out|in|down|reweight|unhold`, `strata pool
// ls|create|rm|set|get`, `strata pg ls|scrub|repair`, `strata auth
// ls|add|rm`: administrative commands. They run through the client library
// (monitor commands; PG scrub/repair straight to the PG's primary) and
// print the monitor's text, or its JSON with --format json.
#include <cstdio>
#include <cstring>

#include "cli/cmd_client_common.h"
#include "cli/commands.h"

namespace strata::cli {

namespace {

using KV = std::vector<std::pair<std::string, std::string>>;

// Common parsing of an admin command: options, then positional arguments
// (at least `min_pos`, at most `max_pos`). Returns false with `rc` set when
// the command should end (help or a usage error).
struct Parsed {
  CommonOptions opts;
  std::vector<std::string> pos;
  ArgList rest{{}};
};

bool parse(const std::string &cmd, std::vector<std::string> args, const char *usage,
           size_t min_pos, size_t max_pos, Parsed *out, int *rc,
           const std::vector<std::string> &value_flags = {}, KV *flag_values = nullptr,
           const std::vector<std::string> &bool_flags = {},
           std::vector<std::string> *flags_set = nullptr) {
  ArgList list(std::move(args));
  auto o = take_common_options(list);
  if (!o.ok()) {
    *rc = usage_error(cmd, o.status().message(), usage);
    return false;
  }
  if (o->help) {
    std::fputs(usage, stdout);
    std::fputs(common_options_help(), stdout);
    *rc = 0;
    return false;
  }
  for (const std::string &f : value_flags) {
    auto v = list.take(f);
    if (!v.ok()) {
      *rc = usage_error(cmd, v.status().message(), usage);
      return false;
    }
    if (*v && flag_values) flag_values->emplace_back(f, **v);
  }
  for (const std::string &f : bool_flags)
    if (list.take_flag(f) && flags_set) flags_set->push_back(f);
  auto pos = list.positional();
  if (!pos.ok()) {
    *rc = usage_error(cmd, pos.status().message(), usage);
    return false;
  }
  if (pos->size() < min_pos || pos->size() > max_pos) {
    *rc = usage_error(cmd, "wrong number of arguments", usage);
    return false;
  }
  out->opts = *o;
  out->pos = *pos;
  return true;
}

int run_mon(const std::string &cmd, const Parsed &p, const std::string &prefix, const KV &args) {
  auto s = Session::open(p.opts);
  if (!s.ok()) return fail(cmd, s.status());
  return (*s)->mon_command(prefix, args, p.opts.format);
}

const char *kStatusUsage = "usage: strata status [options]\n"
                           "  cluster health and warnings, monitor, OSDs up/in, pools, PGs by\n"
                           "  state, objects and usage\n";

const char *kOsdUsage =
    "usage: strata osd <command> [options]\n"
    "  tree                  the placement hierarchy with each OSD's weight, state, address\n"
    "  ls                    OSD ids\n"
    "  out|in|down ID        take an OSD out of placement (its PGs move) / back in /\n"
    "                        mark it down until it boots again\n"
    "  reweight ID WEIGHT    placement weight, e.g. 0.5\n"
    "  unhold ID             let an OSD held down for flapping boot again\n";

const char *kPoolUsage =
    "usage: strata pool <command> [options]\n"
    "  ls                                   pools\n"
    "  create NAME [--size N] [--min-size N] [--pg-num N] [--rule N]\n"
    "  rm NAME                              delete a pool and every object in it\n"
    "  set NAME KEY VALUE                   KEY: size, min_size, rule\n"
    "  get NAME                             a pool's settings\n";

const char *kPgUsage =
    "usage: strata pg <command> [options]\n"
    "  ls [POOL]              PGs with state, acting OSDs, objects\n"
    "  scrub PGID [--deep]    check the replicas of a PG (deep: compare data checksums)\n"
    "  repair PGID            deep scrub and repair replicas that differ\n"
    "  PGID is POOL.SEED as shown by pg ls, e.g. 1.2f\n";

const char *kAuthUsage =
    "usage: strata auth <command> [options]\n"
    "  ls                     entities with a key\n"
    "  add ENTITY             create a key (printed as a keyring section)\n"
    "  rm ENTITY              delete a key\n";

}  // namespace

int cmd_status(std::vector<std::string> args) {
  Parsed p;
  int rc = 0;
  if (!parse("status", std::move(args), kStatusUsage, 0, 0, &p, &rc)) return rc;
  return run_mon("status", p, "status", {});
}

int cmd_osd_admin(std::vector<std::string> args) {
  if (args.empty()) return usage_error("osd", "missing command", kOsdUsage);
  std::string sub = args[0];
  args.erase(args.begin());
  Parsed p;
  int rc = 0;
  if (sub == "tree" || sub == "ls") {
    if (!parse("osd " + sub, std::move(args), kOsdUsage, 0, 0, &p, &rc)) return rc;
    return run_mon("osd " + sub, p, "osd " + sub, {});
  }
  if (sub == "out" || sub == "in" || sub == "down" || sub == "unhold") {
    if (!parse("osd " + sub, std::move(args), kOsdUsage, 1, 1, &p, &rc)) return rc;
    return run_mon("osd " + sub, p, "osd " + sub, {{"id", p.pos[0]}});
  }
  if (sub == "reweight") {
    if (!parse("osd reweight", std::move(args), kOsdUsage, 2, 2, &p, &rc)) return rc;
    return run_mon("osd reweight", p, "osd reweight", {{"id", p.pos[0]}, {"weight", p.pos[1]}});
  }
  return usage_error("osd", "unknown command '" + sub + "'", kOsdUsage);
}

int cmd_pool(std::vector<std::string> args) {
  if (args.empty()) return usage_error("pool", "missing command", kPoolUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kPoolUsage, stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  Parsed p;
  int rc = 0;
  const std::string cmd = "pool " + sub;
  if (sub == "ls") {
    if (!parse(cmd, std::move(args), kPoolUsage, 0, 0, &p, &rc)) return rc;
    return run_mon(cmd, p, "pool ls", {});
  }
  if (sub == "create") {
    KV flags;
    if (!parse(cmd, std::move(args), kPoolUsage, 1, 1, &p, &rc,
               {"--size", "--min-size", "--pg-num", "--rule"}, &flags))
      return rc;
    KV a = {{"name", p.pos[0]}};
    for (const auto &[f, v] : flags) {
      std::string key = f.substr(2);
      for (char &ch : key)
        if (ch == '-') ch = '_';
      a.emplace_back(key, v);
    }
    return run_mon(cmd, p, "pool create", a);
  }
  if (sub == "rm" || sub == "get") {
    if (!parse(cmd, std::move(args), kPoolUsage, 1, 1, &p, &rc)) return rc;
    return run_mon(cmd, p, "pool " + sub, {{"name", p.pos[0]}});
  }
  if (sub == "set") {
    if (!parse(cmd, std::move(args), kPoolUsage, 3, 3, &p, &rc)) return rc;
    return run_mon(cmd, p, "pool set", {{"name", p.pos[0]}, {"key", p.pos[1]}, {"value", p.pos[2]}});
  }
  return usage_error("pool", "unknown command '" + sub + "'", kPoolUsage);
}

int cmd_pg(std::vector<std::string> args) {
  if (args.empty()) return usage_error("pg", "missing command", kPgUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kPgUsage, stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  Parsed p;
  int rc = 0;
  const std::string cmd = "pg " + sub;
  if (sub == "ls") {
    if (!parse(cmd, std::move(args), kPgUsage, 0, 1, &p, &rc)) return rc;
    KV a;
    if (!p.pos.empty()) a.emplace_back("pool", p.pos[0]);
    return run_mon(cmd, p, "pg ls", a);
  }
  if (sub != "scrub" && sub != "repair")
    return usage_error("pg", "unknown command '" + sub + "'", kPgUsage);
  std::vector<std::string> set;
  if (!parse(cmd, std::move(args), kPgUsage, 1, 1, &p, &rc, {}, nullptr, {"--deep"}, &set))
    return rc;
  auto pg = parse_pgid(p.pos[0]);
  if (!pg.ok()) return usage_error(cmd, pg.status().message(), kPgUsage);
  uint32_t flags = 0;
  if (!set.empty()) flags |= STRATA_PG_SCRUB_DEEP;
  if (sub == "repair") flags |= STRATA_PG_REPAIR | STRATA_PG_SCRUB_DEEP;
  auto s = Session::open(p.opts);
  if (!s.ok()) return fail(cmd, s.status());
  char *msg = nullptr, *json = nullptr;
  size_t msg_len = 0, json_len = 0;
  rc = strata_pg_command((*s)->cluster(), pg->first, pg->second, flags, &msg, &msg_len, &json,
                         &json_len);
  std::string message = msg ? std::string(msg, msg_len) : "";
  std::string j = json ? std::string(json, json_len) : "";
  strata_buffer_free(msg);
  strata_buffer_free(json);
  if (rc < 0) return fail(cmd, api_error(rc, "pg " + p.pos[0]));
  if (p.opts.format == OutputFormat::kText) {
    std::fputs(message.c_str(), stdout);
    if (!message.empty() && message.back() != '\n') std::fputc('\n', stdout);
  } else {
    print_json(j.empty() ? "{}" : j, p.opts.format);
  }
  return 0;
}

int cmd_auth(std::vector<std::string> args) {
  if (args.empty()) return usage_error("auth", "missing command", kAuthUsage);
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(kAuthUsage, stdout);
    return 0;
  }
  std::string sub = args[0];
  args.erase(args.begin());
  Parsed p;
  int rc = 0;
  const std::string cmd = "auth " + sub;
  if (sub == "ls") {
    if (!parse(cmd, std::move(args), kAuthUsage, 0, 0, &p, &rc)) return rc;
    return run_mon(cmd, p, "auth ls", {});
  }
  if (sub == "add" || sub == "rm") {
    if (!parse(cmd, std::move(args), kAuthUsage, 1, 1, &p, &rc)) return rc;
    return run_mon(cmd, p, "auth " + sub, {{"entity", p.pos[0]}});
  }
  return usage_error("auth", "unknown command '" + sub + "'", kAuthUsage);
}

}  // namespace strata::cli
