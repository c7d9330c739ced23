#include "mon/mon_commands.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>

#include "cluster/placement_gen.h"
#include "mon/fs_commands.h"
#include "mon/mds_tracker.h"
#include "msg/keyring.h"

namespace strata::mon {

using cluster::ClusterMap;
using cluster::OsdInfo;
using cluster::PoolInfo;

namespace {

constexpr uint32_t kMaxPoolSize = 10;
constexpr uint32_t kMaxPgNum = 65536;

CommandReply error(int code, std::string msg) {
  CommandReply r;
  r.rc = code < 0 ? code : -code;
  r.message = std::move(msg);
  r.json.set("error", r.message);
  return r;
}

CommandReply ok(std::string msg, json::Value j = json::Object{}) {
  CommandReply r;
  r.message = std::move(msg);
  r.json = std::move(j);
  return r;
}

// Named-argument access with errors that say which command and argument.
class Args {
 public:
  explicit Args(const CommandRequest &r) : r_(r) {}

  Result<std::string> str(const std::string &key) const {
    auto it = r_.args.find(key);
    if (it == r_.args.end() || it->second.empty())
      return Status::Error(EINVAL, "'" + r_.prefix + "' needs argument '" + key + "'");
    return it->second;
  }
  bool has(const std::string &key) const { return r_.args.count(key) > 0; }

  // An unsigned integer in [lo, hi]; `fallback` when absent.
  Result<uint32_t> uint(const std::string &key, std::optional<uint32_t> fallback, uint32_t lo,
                        uint32_t hi) const {
    auto it = r_.args.find(key);
    if (it == r_.args.end()) {
      if (fallback) return *fallback;
      return Status::Error(EINVAL, "'" + r_.prefix + "' needs argument '" + key + "'");
    }
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end || errno || it->second[0] == '-' || v < lo || v > hi)
      return Status::Error(EINVAL, "'" + r_.prefix + "': " + key + " must be an integer from " +
                                       std::to_string(lo) + " to " + std::to_string(hi) +
                                       ", got '" + it->second + "'");
    return uint32_t(v);
  }

  Result<int32_t> osd(const ClusterMap &m) const {
    auto s = str("id");
    if (!s.ok()) return s.status();
    int32_t id = parse_osd_id(*s);
    if (id < 0) return Status::Error(EINVAL, "'" + *s + "' is not an OSD id (e.g. 3 or osd.3)");
    if (!m.osd(id)) return Status::Error(ENOENT, "osd." + std::to_string(id) + " does not exist");
    return id;
  }

  Result<const PoolInfo *> pool(const ClusterMap &m, const std::string &key = "name") const {
    auto s = str(key);
    if (!s.ok()) return s.status();
    if (const PoolInfo *p = m.pool_by_name(*s)) return p;
    char *end = nullptr;
    unsigned long id = std::strtoul(s->c_str(), &end, 10);
    if (!*end)
      if (const PoolInfo *p = m.pool(uint32_t(id))) return p;
    return Status::Error(ENOENT, "pool '" + *s + "' does not exist");
  }

 private:
  const CommandRequest &r_;
};

std::string weight_text(uint32_t w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.5f", double(w) / 65536.0);
  return buf;
}

std::string ids_text(const std::vector<int32_t> &ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

json::Value ids_json(const std::vector<int32_t> &ids) {
  json::Value a = json::Array{};
  for (int32_t id : ids) a.push(id);
  return a;
}

json::Value pool_json(const PoolInfo &p) {
  json::Value j;
  j.set("id", p.id);
  j.set("name", p.name);
  j.set("size", p.size);
  j.set("min_size", p.min_size);
  j.set("pg_num", p.pg_num);
  j.set("rule", p.rule);
  return j;
}

std::string pool_text(const PoolInfo &p) {
  return "pool " + std::to_string(p.id) + " '" + p.name + "' size " + std::to_string(p.size) +
         " min_size " + std::to_string(p.min_size) + " pg_num " + std::to_string(p.pg_num) +
         " rule " + std::to_string(p.rule) +
         (p.rule == cluster::kRuleHost ? " (replicas on distinct hosts)"
                                       : " (replicas on distinct OSDs)");
}

std::string base64(const std::string &in) {
  static const char *tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v =
        uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 | uint8_t(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += tbl[(v >> k) & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += i + 1 < in.size() ? tbl[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool valid_entity(const std::string &e) {
  if (e == "mon") return true;
  if (e.rfind("osd.", 0) == 0) return parse_osd_id(e) >= 0;
  if (e.rfind("mds.", 0) == 0) return !mds_name_of(e).empty();
  if (e.rfind("client.", 0) == 0 && e.size() > 7) {
    for (char c : e.substr(7))
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
        return false;
    return true;
  }
  return false;
}

bool valid_pool_name(const std::string &n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

// ---------------------------------------------------------------- status

CommandReply cmd_status(const CommandState &st) {
  ClusterSummary s = st.stats->summary(*st.view);
  for (const auto &[id, h] : st.flap_holds) {
    std::string w = "osd." + std::to_string(id) + " held down: marked down " +
                    std::to_string(h.markdowns) +
                    " times in a short while (flapping); `strata osd unhold " + std::to_string(id) +
                    "` lets it back";
    if (st.flap_hold_ms)
      w += ", else it may boot after " + std::to_string(st.flap_hold_ms / 1000) + " s";
    s.warnings.push_back(w);
  }
  if (!st.flap_holds.empty() && s.health == "HEALTH_OK") s.health = "HEALTH_WARN";
  json::Value j = s.to_json();
  j.set("fsid", st.view->map().fsid);
  j.set("epoch", st.view->epoch());
  return ok(s.to_text(st.view->map()), j);
}

// ---------------------------------------------------------------- osd

CommandReply cmd_osd_ls(const CommandState &st) {
  json::Value a = json::Array{};
  std::string text;
  for (const auto &[id, o] : st.view->map().osds) {
    a.push(id);
    text += std::to_string(id) + "\n";
  }
  return ok(text.empty() ? "no OSDs\n" : text, a);
}

CommandReply cmd_osd_tree(const CommandState &st) {
  const ClusterMap &m = st.view->map();
  const placement::PlacementMap &pm = m.placement;
  json::Value nodes = json::Array{};
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-4s %-10s %-6s %-18s %-6s %-4s %s\n", "ID", "WEIGHT", "TYPE",
                "NAME", "STATUS", "IN", "ADDR");
  os << line;
  // Subtree weights from the devices (the placement map stores no bucket weights).
  std::function<uint64_t(int32_t)> weight = [&](int32_t item) -> uint64_t {
    if (item >= 0) {
      const OsdInfo *o = m.osd(item);
      return o ? o->weight : 0;
    }
    const placement::Bucket *b = pm.bucket(item);
    uint64_t w = 0;
    if (b)
      for (int32_t c : b->items) w += weight(c);
    return w;
  };
  std::function<void(int32_t, int)> walk = [&](int32_t item, int depth) {
    std::string indent(size_t(depth) * 4, ' ');
    json::Value n;
    n.set("id", item);
    if (item >= 0) {
      const OsdInfo *o = m.osd(item);
      if (!o) return;
      n.set("name", "osd." + std::to_string(item));
      n.set("type", "osd");
      n.set("weight", double(o->weight) / 65536.0);
      n.set("status", o->up ? "up" : "down");
      n.set("in", o->in);
      n.set("addr", o->addr);
      n.set("host", o->host);
      std::snprintf(line, sizeof line, "%-4d %-10s %-6s %-18s %-6s %-4s %s\n", item,
                    weight_text(o->weight).c_str(), "osd",
                    (indent + "osd." + std::to_string(item)).c_str(), o->up ? "up" : "down",
                    o->in ? "in" : "out", o->addr.c_str());
      os << line;
      nodes.push(std::move(n));
      return;
    }
    const placement::Bucket *b = pm.bucket(item);
    if (!b) return;
    uint64_t w = weight(item);
    n.set("name", b->name);
    n.set("type", pm.type_name(b->type));
    n.set("weight", double(w) / 65536.0);
    n.set("children", ids_json(b->items));
    std::snprintf(line, sizeof line, "%-4d %-10s %-6s %s\n", item,
                  weight_text(uint32_t(std::min<uint64_t>(w, UINT32_MAX))).c_str(),
                  pm.type_name(b->type).c_str(), (indent + b->name).c_str());
    os << line;
    nodes.push(std::move(n));
    for (int32_t c : b->items) walk(c, depth + 1);
  };
  if (pm.bucket(-1)) walk(-1, 0);
  json::Value j;
  j.set("nodes", nodes);
  return ok(os.str(), j);
}

CommandReply cmd_osd_state(const CommandRequest &req, const CommandState &st,
                           CommandEffect *effect) {
  const ClusterMap &m = st.view->map();
  auto id = Args(req).osd(m);
  if (!id.ok()) return error(id.status().code(), id.status().message());
  std::string name = "osd." + std::to_string(*id);
  ClusterMap next = m;
  OsdInfo &o = next.osds[*id];
  std::set<int32_t> admin_out = st.admin_out;
  if (req.prefix == "osd out") {
    if (!o.in) return ok(name + " is already out");
    o.in = false;
    admin_out.insert(*id);
    effect->meta[kMetaAdminOut] = format_id_set(admin_out);
    effect->next = std::move(next);
    return ok("marked out " + name);
  }
  if (req.prefix == "osd in") {
    admin_out.erase(*id);
    if (admin_out != st.admin_out) effect->meta[kMetaAdminOut] = format_id_set(admin_out);
    if (o.in) {
      return ok(name + " is already in");
    }
    o.in = true;
    effect->next = std::move(next);
    return ok("marked in " + name);
  }
  // osd down
  if (!o.up) return ok(name + " is already down");
  o.up = false;
  o.down_at = m.epoch + 1;
  effect->next = std::move(next);
  return ok("marked down " + name + " (it will boot again if it is alive)");
}

CommandReply cmd_osd_unhold(const CommandRequest &req, const CommandState &st,
                            CommandEffect *effect) {
  auto id = Args(req).osd(st.view->map());
  if (!id.ok()) return error(id.status().code(), id.status().message());
  std::string name = "osd." + std::to_string(*id);
  if (!st.flap_holds.count(*id)) return ok(name + " is not held down");
  std::map<int32_t, FlapGuard::Hold> rest = st.flap_holds;
  rest.erase(*id);
  effect->meta[kMetaFlapHolds] = FlapGuard::encode_holds(rest);
  return ok("released " + name + " (it boots again if it is alive)");
}

CommandReply cmd_osd_reweight(const CommandRequest &req, const CommandState &st,
                              CommandEffect *effect) {
  const ClusterMap &m = st.view->map();
  Args a(req);
  auto id = a.osd(m);
  if (!id.ok()) return error(id.status().code(), id.status().message());
  auto w = a.str("weight");
  if (!w.ok()) return error(w.status().code(), w.status().message());
  char *end = nullptr;
  double v = std::strtod(w->c_str(), &end);
  if (*end || !(v >= 0) || v > 1000)
    return error(EINVAL, "weight must be a number from 0 to 1000, got '" + *w + "'");
  ClusterMap next = m;
  next.osds[*id].weight = uint32_t(std::llround(v * 65536.0));
  effect->next = std::move(next);
  return ok("reweighted osd." + std::to_string(*id) + " to " +
            weight_text(uint32_t(std::llround(v * 65536.0))));
}

// ---------------------------------------------------------------- pools

CommandReply cmd_pool_create(const CommandRequest &req, const CommandState &st,
                             CommandEffect *effect) {
  const ClusterMap &m = st.view->map();
  Args a(req);
  auto name = a.str("name");
  if (!name.ok()) return error(name.status().code(), name.status().message());
  if (!valid_pool_name(*name))
    return error(EINVAL, "bad pool name '" + *name + "' (letters, digits, _ - . ; at most 64)");
  if (m.pool_by_name(*name)) return error(EEXIST, "pool '" + *name + "' already exists");
  auto size = a.uint("size", st.defaults.size, 1, kMaxPoolSize);
  if (!size.ok()) return error(size.status().code(), size.status().message());
  auto min_size = a.uint("min_size", std::min(st.defaults.min_size, *size), 1, *size);
  if (!min_size.ok()) return error(min_size.status().code(), min_size.status().message());
  auto pg_num = a.uint("pg_num", st.defaults.pg_num, 1, kMaxPgNum);
  if (!pg_num.ok()) return error(pg_num.status().code(), pg_num.status().message());
  auto rule = a.uint("rule", cluster::default_rule(m, *size), 0, 1);
  if (!rule.ok()) return error(rule.status().code(), rule.status().message());
  PoolInfo p;
  p.id = m.next_pool_id();
  if (p.id == 0) return error(ENOSPC, "no pool id left (every 32-bit id was given out)");
  p.name = *name;
  p.size = *size;
  p.min_size = *min_size;
  p.pg_num = *pg_num;
  p.rule = *rule;
  ClusterMap next = m;
  next.pools[p.id] = p;
  next.pool_max = p.id;
  effect->next = std::move(next);
  return ok("created " + pool_text(p), pool_json(p));
}

CommandReply cmd_pool_rm(const CommandRequest &req, const CommandState &st, CommandEffect *effect) {
  auto p = Args(req).pool(st.view->map());
  if (!p.ok()) return error(p.status().code(), p.status().message());
  ClusterMap next = st.view->map();
  std::string name = (*p)->name;
  // Maps from before pool_max existed learn the id here at the latest.
  next.pool_max = std::max(next.pool_max, (*p)->id);
  next.pools.erase((*p)->id);
  effect->next = std::move(next);
  return ok("removed pool '" + name + "'");
}

CommandReply cmd_pool_set(const CommandRequest &req, const CommandState &st,
                          CommandEffect *effect) {
  Args a(req);
  auto p = a.pool(st.view->map());
  if (!p.ok()) return error(p.status().code(), p.status().message());
  auto key = a.str("key");
  if (!key.ok()) return error(key.status().code(), key.status().message());
  PoolInfo np = **p;
  if (*key == "size") {
    auto v = a.uint("value", std::nullopt, 1, kMaxPoolSize);
    if (!v.ok()) return error(v.status().code(), v.status().message());
    np.size = *v;
    np.min_size = std::min(np.min_size, np.size);
  } else if (*key == "min_size") {
    auto v = a.uint("value", std::nullopt, 1, np.size);
    if (!v.ok()) return error(v.status().code(), v.status().message());
    np.min_size = *v;
  } else if (*key == "rule") {
    auto v = a.uint("value", std::nullopt, 0, 1);
    if (!v.ok()) return error(v.status().code(), v.status().message());
    np.rule = *v;
  } else if (*key == "pg_num") {
    auto v = a.uint("value", std::nullopt, 1, kMaxPgNum);
    if (!v.ok()) return error(v.status().code(), v.status().message());
    if (*v != np.pg_num)
      return error(ENOTSUP,
                   "changing pg_num of an existing pool is not supported (PGs do not "
                   "split yet); create a new pool");
  } else {
    return error(EINVAL, "unknown pool key '" + *key + "' (size, min_size, rule, pg_num)");
  }
  if (np == **p) return ok("pool '" + np.name + "' unchanged", pool_json(np));
  ClusterMap next = st.view->map();
  next.pools[np.id] = np;
  effect->next = std::move(next);
  return ok("set " + pool_text(np), pool_json(np));
}

CommandReply cmd_pool_get(const CommandRequest &req, const CommandState &st) {
  auto p = Args(req).pool(st.view->map());
  if (!p.ok()) return error(p.status().code(), p.status().message());
  return ok(pool_text(**p), pool_json(**p));
}

CommandReply cmd_pool_ls(const CommandState &st) {
  json::Value a = json::Array{};
  std::string text;
  for (const auto &[id, p] : st.view->map().pools) {
    a.push(pool_json(p));
    text += pool_text(p) + "\n";
  }
  return ok(text.empty() ? "no pools\n" : text, a);
}

CommandReply cmd_pg_ls(const CommandRequest &req, const CommandState &st) {
  int64_t pool = -1;
  if (Args(req).has("pool")) {
    auto p = Args(req).pool(st.view->map(), "pool");
    if (!p.ok()) return error(p.status().code(), p.status().message());
    pool = (*p)->id;
  }
  json::Value a = json::Array{};
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-8s %-24s %-10s %-12s %-14s %s\n", "PG", "STATE", "OBJECTS",
                "BYTES", "UP", "ACTING");
  os << line;
  for (const PgRow &r : st.stats->pgs(*st.view, pool)) {
    json::Value j;
    j.set("pgid", placement::format_pg(r.pg));
    j.set("pool", r.pg.pool);
    j.set("seed", r.pg.seed);
    j.set("state", r.state);
    j.set("up", ids_json(r.up));
    j.set("acting", ids_json(r.acting));
    j.set("primary", r.acting.empty() ? -1 : r.acting[0]);
    j.set("objects", r.objects);
    j.set("bytes", r.bytes);
    j.set("last_update", r.last_update);
    json::Value d = json::Array{};
    for (const auto &[oid, why] : r.damaged) {
      json::Value o;
      o.set("oid", oid);
      o.set("reason", why);
      d.push(std::move(o));
    }
    j.set("damaged_objects", d);
    j.set("damaged_total", r.damaged_total);
    j.set("read_repairs", r.read_repairs);
    a.push(std::move(j));
    std::snprintf(line, sizeof line, "%-8s %-24s %-10llu %-12llu %-14s %s\n",
                  placement::format_pg(r.pg).c_str(), r.state.c_str(),
                  (unsigned long long)r.objects, (unsigned long long)r.bytes,
                  ids_text(r.up).c_str(), ids_text(r.acting).c_str());
    os << line;
  }
  return ok(os.str(), a);
}

// ---------------------------------------------------------------- auth

CommandReply cmd_auth(const CommandRequest &req, const CommandState &st, CommandEffect *effect) {
  if (req.prefix == "auth ls") {
    json::Value a = json::Array{};
    std::string text;
    for (const auto &[entity, key] : *st.auth) {
      a.push(entity);
      text += entity + "\n";
    }
    return ok(text, a);
  }
  auto e = Args(req).str("entity");
  if (!e.ok()) return error(e.status().code(), e.status().message());
  if (!valid_entity(*e))
    return error(EINVAL, "bad entity '" + *e + "' (mon, osd.N, mds.NAME or client.NAME)");
  bool exists = st.auth->count(*e) > 0;
  if (req.prefix == "auth add") {
    if (exists) return error(EEXIST, *e + " already has a key (auth rm it first)");
    std::string secret = msg::Keyring::generate_secret();
    effect->auth[*e] = secret;
    msg::Keyring k;
    k.set(*e, secret);
    json::Value j;
    j.set("entity", *e);
    j.set("key", base64(secret));
    return ok(k.to_text(), j);
  }
  if (!exists) return error(ENOENT, *e + " has no key");
  if (*e == "mon" || *e == "client.admin")
    return error(EPERM, "refusing to remove the key of " + *e + " (it would lock you out)");
  effect->auth[*e] = std::nullopt;
  return ok("removed the key of " + *e);
}

}  // namespace

int32_t parse_osd_id(const std::string &s) {
  std::string n = s.rfind("osd.", 0) == 0 ? s.substr(4) : s;
  if (n.empty() || n.size() > 9) return -1;
  for (char c : n)
    if (c < '0' || c > '9') return -1;
  return int32_t(std::strtol(n.c_str(), nullptr, 10));
}

std::set<int32_t> parse_id_set(const std::string &text) {
  std::set<int32_t> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ','))
    if (int32_t id = parse_osd_id(part); id >= 0) out.insert(id);
  return out;
}

std::string format_id_set(const std::set<int32_t> &ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

bool is_mutating(const std::string &p) {
  return p == "osd out" || p == "osd in" || p == "osd down" || p == "osd reweight" ||
         p == "pool create" || p == "pool rm" || p == "pool set" || p == "auth add" ||
         p == "auth rm" || p == "osd unhold" || p == "fs new" || p == "fs rm";
}

CommandReply run_command(const CommandRequest &req, const CommandState &st, CommandEffect *effect) {
  if (is_mutating(req.prefix) && req.entity != "client.admin")
    return error(EACCES, "'" + req.prefix + "' is for client.admin, not " + req.entity);
  const std::string &p = req.prefix;
  if (p == "ping") return ok("pong");  // session keepalive (msg/keepalive.h)
  if (p == "status") return cmd_status(st);
  if (p == "osd ls") return cmd_osd_ls(st);
  if (p == "osd tree") return cmd_osd_tree(st);
  if (p == "osd out" || p == "osd in" || p == "osd down") return cmd_osd_state(req, st, effect);
  if (p == "osd reweight") return cmd_osd_reweight(req, st, effect);
  if (p == "osd unhold") return cmd_osd_unhold(req, st, effect);
  if (p == "pool create") return cmd_pool_create(req, st, effect);
  if (p == "pool rm") return cmd_pool_rm(req, st, effect);
  if (p == "pool set") return cmd_pool_set(req, st, effect);
  if (p == "pool get") return cmd_pool_get(req, st);
  if (p == "pool ls") return cmd_pool_ls(st);
  if (p == "pg ls") return cmd_pg_ls(req, st);
  if (p == "auth add" || p == "auth rm" || p == "auth ls") return cmd_auth(req, st, effect);
  if (is_fs_command(p)) return run_fs_command(req, st, effect);
  return error(EINVAL, "unknown command '" + p +
                           "' (status, osd tree|ls|out|in|down|reweight|unhold, pool "
                           "create|rm|set|get|ls, pg ls, auth add|rm|ls, fs new|rm|ls|status)");
}

}  // namespace strata::mon
