#include "mon/fs_commands.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "cluster/placement_gen.h"
#include "mon/mds_tracker.h"

namespace strata::mon {

using cluster::ClusterMap;
using cluster::FsInfo;
using cluster::MdsInfo;
using cluster::MdsState;
using cluster::PoolInfo;

namespace {

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

std::string arg(const CommandRequest &req, const std::string &key) {
  auto it = req.args.find(key);
  return it == req.args.end() ? std::string() : it->second;
}

bool valid_fs_name(const std::string &n) {
  // The pools are named after it (NAME.meta), so it follows pool names,
  // minus the room the suffix takes.
  if (n.empty() || n.size() > 58) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

const PoolInfo *find_pool(const ClusterMap &m, const std::string &s) {
  if (const PoolInfo *p = m.pool_by_name(s)) return p;
  char *end = nullptr;
  unsigned long id = std::strtoul(s.c_str(), &end, 10);
  if (!s.empty() && !*end) return m.pool(uint32_t(id));
  return nullptr;
}

std::string pool_name(const ClusterMap &m, uint32_t id) {
  const PoolInfo *p = m.pool(id);
  return p ? p->name : "(pool " + std::to_string(id) + " is gone)";
}

json::Value fs_json(const ClusterMap &m, const FsInfo &f) {
  json::Value j;
  j.set("id", f.id);
  j.set("name", f.name);
  j.set("metadata_pool", f.metadata_pool);
  j.set("metadata_pool_name", pool_name(m, f.metadata_pool));
  j.set("data_pool", f.data_pool);
  j.set("data_pool_name", pool_name(m, f.data_pool));
  j.set("created_epoch", f.created_epoch);
  const MdsInfo *a = m.active_mds(f.id);
  j.set("active_mds", a ? json::Value(a->name) : json::Value());
  return j;
}

std::string fs_line(const ClusterMap &m, const FsInfo &f) {
  const MdsInfo *a = m.active_mds(f.id);
  return f.name + " (id " + std::to_string(f.id) + "): metadata pool " +
         pool_name(m, f.metadata_pool) + ", data pool " + pool_name(m, f.data_pool) +
         ", active mds " + (a ? a->name : std::string("none")) + "\n";
}

// A new pool for a filesystem, like `pool create` with the defaults.
PoolInfo new_pool(ClusterMap &next, const std::string &name, uint32_t pg_num,
                  const CommandState &st) {
  PoolInfo p;
  p.id = next.next_pool_id();
  p.name = name;
  p.size = st.defaults.size;
  p.min_size = std::min(st.defaults.min_size, p.size);
  p.pg_num = pg_num;
  p.rule = cluster::default_rule(next, p.size);
  next.pools[p.id] = p;
  next.pool_max = p.id;
  return p;
}

CommandReply cmd_fs_new(const CommandRequest &req, const CommandState &st, CommandEffect *effect) {
  const ClusterMap &m = st.view->map();
  std::string name = arg(req, "name");
  if (!valid_fs_name(name))
    return error(EINVAL,
                 "bad filesystem name '" + name + "' (letters, digits, _ - . ; at most 58)");
  if (m.fs_by_name(name)) return error(EEXIST, "filesystem '" + name + "' already exists");
  uint32_t pg_num = st.defaults.pg_num;
  if (std::string s = arg(req, "pg_num"); !s.empty()) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (*end || s[0] == '-' || v < 1 || v > kMaxPgNum)
      return error(EINVAL, "'fs new': pg_num must be an integer from 1 to " +
                               std::to_string(kMaxPgNum) + ", got '" + s + "'");
    pg_num = uint32_t(v);
  }
  ClusterMap next = m;
  std::string made;
  auto pool_for = [&](const std::string &key, const std::string &suffix,
                      uint32_t pgs) -> Result<uint32_t> {
    std::string given = arg(req, key);
    if (!given.empty()) {
      const PoolInfo *p = find_pool(next, given);
      if (!p) return Status::Error(ENOENT, "pool '" + given + "' does not exist");
      return p->id;
    }
    std::string pname = name + suffix;
    if (next.pool_by_name(pname))
      return Status::Error(EEXIST, "pool '" + pname + "' already exists (name it with --" +
                                       (key == "metadata_pool" ? "metadata-pool" : "data-pool") +
                                       " to use it)");
    PoolInfo p = new_pool(next, pname, pgs, st);
    if (p.id == 0) return Status::Error(ENOSPC, "no pool id left");
    made += (made.empty() ? "" : ", ") + pname;
    return p.id;
  };
  // The namespace is small next to the file data: fewer PGs.
  auto meta = pool_for("metadata_pool", ".meta", std::max<uint32_t>(1, std::min(pg_num, 8u)));
  if (!meta.ok()) return error(meta.status().code(), meta.status().message());
  auto data = pool_for("data_pool", ".data", pg_num);
  if (!data.ok()) return error(data.status().code(), data.status().message());
  if (*meta == *data) return error(EINVAL, "the metadata pool and the data pool must differ");
  for (const auto &[id, f] : m.filesystems)
    if (f.metadata_pool == *meta)
      return error(
          EBUSY, "pool '" + pool_name(next, *meta) + "' holds the metadata of fs '" + f.name + "'");
  FsInfo f;
  f.id = std::max(next.fs_max, next.filesystems.empty() ? 0 : next.filesystems.rbegin()->first) + 1;
  f.name = name;
  f.metadata_pool = *meta;
  f.data_pool = *data;
  f.created_epoch = m.epoch + 1;
  next.filesystems[f.id] = f;
  next.fs_max = f.id;
  effect->next = std::move(next);
  std::string msg = "created fs '" + name + "' (id " + std::to_string(f.id) + ")";
  if (!made.empty()) msg += "; created pools " + made;
  ClusterMap shown = *effect->next;
  return ok(msg, fs_json(shown, f));
}

CommandReply cmd_fs_rm(const CommandRequest &req, const CommandState &st, CommandEffect *effect) {
  const ClusterMap &m = st.view->map();
  std::string name = arg(req, "name");
  const FsInfo *f = m.fs_by_name(name);
  if (!f) return error(ENOENT, "filesystem '" + name + "' does not exist");
  std::string force = arg(req, "force");
  bool forced = force == "1" || force == "true" || force == "yes";
  ClusterMap next = m;
  std::string dropped;
  for (auto &[n, d] : next.mds) {
    if (d.fs_id != f->id || d.state == MdsState::kStandby) continue;
    if (!forced)
      return error(EBUSY, "mds." + n + " is " + mds_state_name(d.state) + " for fs '" + name +
                              "' (stop it first, or --force)");
    d.state = MdsState::kStandby;
    d.fs_id = 0;
    d.incarnation = 0;
    dropped += " mds." + n;
  }
  uint32_t meta = f->metadata_pool, data = f->data_pool;
  next.fs_max = std::max(next.fs_max, f->id);
  next.filesystems.erase(f->id);
  effect->next = std::move(next);
  std::string msg = "removed fs '" + name + "'; its pools " + pool_name(m, meta) + " and " +
                    pool_name(m, data) + " are left (pool rm them to delete the data)";
  if (!dropped.empty()) msg += "; now standby:" + dropped;
  json::Value j;
  j.set("removed", name);
  j.set("metadata_pool", pool_name(m, meta));
  j.set("data_pool", pool_name(m, data));
  return ok(msg, j);
}

CommandReply cmd_fs_ls(const CommandState &st) {
  const ClusterMap &m = st.view->map();
  json::Value a = json::Array{};
  std::string text;
  for (const auto &[id, f] : m.filesystems) {
    a.push(fs_json(m, f));
    text += fs_line(m, f);
  }
  if (text.empty()) text = "no filesystems\n";
  return ok(text, a);
}

json::Value stats_json(const MdsStats &s) {
  json::Value j;
  j.set("sessions", s.sessions);
  j.set("leases", s.leases);
  j.set("cache_bytes", s.cache_bytes);
  j.set("cache_limit_bytes", s.cache_limit_bytes);
  j.set("inodes", s.inodes);
  j.set("journal_bytes", s.journal_bytes);
  j.set("requests", s.requests);
  j.set("journal_writes", s.journal_writes);
  j.set("apply_writes", s.apply_writes);
  j.set("purged_objects", s.purged_objects);
  j.set("beacon_ms", s.at_ms);
  return j;
}

CommandReply cmd_fs_status(const CommandRequest &req, const CommandState &st) {
  const ClusterMap &m = st.view->map();
  std::string only = arg(req, "name");
  const FsInfo *want = nullptr;
  if (!only.empty() && !(want = m.fs_by_name(only)))
    return error(ENOENT, "filesystem '" + only + "' does not exist");
  const std::map<std::string, MdsStats> empty;
  const auto &stats = st.mds_stats ? *st.mds_stats : empty;
  json::Value fss = json::Array{};
  std::string text;
  for (const auto &[id, f] : m.filesystems) {
    if (want && want->id != id) continue;
    json::Value j = fs_json(m, f);
    text += fs_line(m, f);
    if (const MdsInfo *a = m.active_mds(id)) {
      auto s = stats.find(a->name);
      if (s != stats.end()) {
        j.set("active_stats", stats_json(s->second));
        const MdsStats &x = s->second;
        text += "  mds." + a->name + ": " + std::to_string(x.sessions) + " sessions, " +
                std::to_string(x.leases) + " leases, cache " + std::to_string(x.cache_bytes) + "/" +
                std::to_string(x.cache_limit_bytes) + " bytes, " + std::to_string(x.inodes) +
                " inodes, journal " + std::to_string(x.journal_bytes) + " bytes\n" +
                "    since start: " + std::to_string(x.requests) +
                " requests, object writes: " + std::to_string(x.journal_writes) + " journal, " +
                std::to_string(x.apply_writes) + " apply, " + std::to_string(x.purged_objects) +
                " purged data objects\n";
      }
    }
    fss.push(std::move(j));
  }
  if (!want && m.filesystems.empty()) text += "no filesystems\n";
  json::Value mdss = json::Array{};
  text += "mds daemons:\n";
  size_t shown = 0;
  for (const auto &[name, d] : m.mds) {
    if (want && d.fs_id != want->id && d.state != MdsState::kStandby) continue;
    json::Value j;
    j.set("name", name);
    j.set("addr", d.addr);
    j.set("state", mds_state_name(d.state));
    const FsInfo *f = d.state == MdsState::kStandby  ? nullptr
                      : m.filesystems.count(d.fs_id) ? &m.filesystems.at(d.fs_id)
                                                     : nullptr;
    j.set("fs", f ? json::Value(f->name) : json::Value());
    j.set("fs_id", d.fs_id);
    j.set("incarnation", d.incarnation);
    j.set("up_from", d.up_from);
    if (auto s = stats.find(name); s != stats.end()) j.set("stats", stats_json(s->second));
    mdss.push(std::move(j));
    text += "  mds." + name + " " + d.addr + " " + mds_state_name(d.state);
    if (d.state != MdsState::kStandby)
      text += " fs " + (f ? f->name : std::to_string(d.fs_id)) + " incarnation " +
              std::to_string(d.incarnation);
    text += "\n";
    ++shown;
  }
  if (!shown) text += "  none\n";
  json::Value out;
  out.set("epoch", m.epoch);
  out.set("filesystems", std::move(fss));
  out.set("mds", std::move(mdss));
  return ok(text, out);
}

}  // namespace

bool is_fs_command(const std::string &p) {
  return p == "fs new" || p == "fs rm" || p == "fs ls" || p == "fs status";
}

CommandReply run_fs_command(const CommandRequest &req, const CommandState &st,
                            CommandEffect *effect) {
  const std::string &p = req.prefix;
  if (p == "fs new") return cmd_fs_new(req, st, effect);
  if (p == "fs rm") return cmd_fs_rm(req, st, effect);
  if (p == "fs ls") return cmd_fs_ls(st);
  if (p == "fs status") return cmd_fs_status(req, st);
  return error(EINVAL, "unknown command '" + p + "' (fs new|rm|ls|status)");
}

}  // namespace strata::mon
