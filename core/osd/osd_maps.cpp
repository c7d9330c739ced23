// The control thread: new maps (applied in epoch order, stored, handed to
// every shard), keys from the monitor, booting, and every
// heartbeat_interval_ms the heartbeats, failure reports and stats beacon.
#include <algorithm>

#include "cluster/map_wire.h"
#include "msg/message_types.h"
#include "osd/osd_daemon.h"
#include "osd/pg_msgs.h"

namespace strata::osd {

namespace {
// Maps kept in memory for the intervals of PGs this OSD starts following.
constexpr size_t kMapHistory = 500;
}  // namespace

void OsdDaemon::tick() {
  auto now = HeartbeatTracker::Clock::now();
  MapRef m = current_map();
  if (m) {
    const bool failsafe = failsafe_full();
    const bool full = disk_full();
    // Heartbeats to every up peer (dropped, not queued, while unreachable).
    for (const auto &[id, o] : m->map().osds) {
      if (id == cfg_.id || !o.up) continue;
      links_->send(id, build_msg<wire::Heartbeat>(msg::kMsgHeartbeat, [&](wire::Heartbeat::Builder b) {
                     b.setFrom(cfg_.id);
                     b.setEpoch(m->epoch());
                     b.setStampNs(static_cast<uint64_t>(now.time_since_epoch().count()));
                     b.setFailsafeFull(failsafe);
                     b.setFull(full);
                   }),
                   true);
    }
    for (const auto &r : heartbeats_.due(now, std::chrono::milliseconds(cfg_.heartbeat_grace_ms))) {
      if (!r.still_alive)
        log_.warn("osd", "osd." + std::to_string(r.osd) + " has not answered heartbeats for " +
                             std::to_string(r.silent_ms) + " ms; reporting it");
      mon_->send(build_msg<wire::OsdFailure>(msg::kMsgOsdFailure, [&](wire::OsdFailure::Builder b) {
        b.setTarget(r.osd);
        b.setReporter(cfg_.id);
        b.setFailedForMs(r.silent_ms);
        b.setEpoch(m->epoch());
        b.setStillAlive(r.still_alive);
      }));
    }
  }
  links_->retry();
  maybe_boot(false);
  send_stats();
  for (auto &sh : shards_) {
    OsdShard *s = sh.get();
    s->post([s] {
      for (auto &[id, pg] : s->pgs) pg->on_tick();
    });
  }
}

void OsdDaemon::send_stats() {
  if (!mon_ || !mon_->connected()) return;
  MapRef m = current_map();
  std::vector<PgStatSnap> pgs;
  {
    std::lock_guard lk(stats_mu_);
    for (const auto &[id, s] : stats_) pgs.push_back(s);
  }
  // The filesystem's view (with the stages being written), which is what
  // fills up: the monitor judges fullness from it.
  auto usage = store_->space();
  std::vector<std::string> warnings = store_->health_warnings();
  mon_->send(build_msg<wire::OsdStats>(msg::kMsgOsdStats, [&](wire::OsdStats::Builder b) {
    b.setId(cfg_.id);
    b.setEpoch(m ? m->epoch() : 0);
    auto l = b.initPgs(static_cast<unsigned>(pgs.size()));
    for (unsigned i = 0; i < pgs.size(); ++i) {
      const PgStatSnap &s = pgs[i];
      auto p = l[i];
      p.setPool(s.pgid.pool);
      p.setSeed(s.pgid.seed);
      p.setState(s.state);
      p.setObjects(s.objects);
      p.setBytes(s.bytes);
      p.setLastUpdate(s.last_update.version);
      auto a = p.initActing(static_cast<unsigned>(s.acting.size()));
      for (unsigned j = 0; j < s.acting.size(); ++j) a.set(j, s.acting[j]);
      p.setEpoch(s.epoch);
      auto d = p.initDamaged(static_cast<unsigned>(s.damaged.size()));
      for (unsigned j = 0; j < s.damaged.size(); ++j) {
        d[j].setOid(s.damaged[j].first);
        d[j].setReason(s.damaged[j].second);
      }
      p.setDamagedTotal(s.damaged_total);
      p.setReadRepairs(s.read_repairs);
    }
    if (usage.ok()) {
      b.setUsedBytes(usage->used_bytes);
      b.setTotalBytes(usage->total_bytes);
    }
    b.setRefusedFull(full_since_report_.exchange(false, std::memory_order_relaxed) ||
                     disk_used_ratio() >= cfg_.full_ratio);
    auto w = b.initWarnings(static_cast<unsigned>(warnings.size()));
    for (unsigned i = 0; i < warnings.size(); ++i) w.set(i, warnings[i]);
  }));
}

// --- the monitor session ----------------------------------------------------------

msg::Message OsdDaemon::boot_message() {
  return build_msg<wire::OsdBoot>(msg::kMsgOsdBoot, [&](wire::OsdBoot::Builder b) {
    b.setId(cfg_.id);
    b.setAddr(bound_addr_);
    b.setHost(cfg_.host);
    b.setFsid(cfg_.fsid);
    b.setStoreFsid(store_fsid_);
    b.setWeight(0x10000);
  });
}

std::vector<msg::Message> OsdDaemon::on_mon_connect() {
  MapRef m = current_map();
  std::vector<msg::Message> out;
  out.push_back(build_msg<wire::MonSubscribe>(msg::kMsgMonSubscribe, [&](wire::MonSubscribe::Builder b) {
    b.setHaveEpoch(m ? m->epoch() : 0);
    b.setWantAuth(true);
  }));
  out.push_back(boot_message());
  last_boot_ = std::chrono::steady_clock::now();
  return out;
}

// Boots again when the newest map does not show this run up (the monitor
// lost the boot, or marked this OSD down while it was alive).
void OsdDaemon::maybe_boot(bool force) {
  MapRef m = current_map();
  if (!mon_ || !mon_->connected()) return;
  if (m && is_me_up(*m)) return;
  auto wait = std::max(std::chrono::milliseconds(2000), std::chrono::milliseconds(4 * cfg_.heartbeat_interval_ms));
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_boot_ < wait) return;
  last_boot_ = now;
  log_.info("osd", "osd." + std::to_string(cfg_.id) + " is not up in map " +
                       std::to_string(m ? m->epoch() : 0) + "; booting again");
  mon_->send(boot_message());
}

void OsdDaemon::handle_auth_update(const msg::Message &m) {
  std::map<std::string, std::string> keys;
  uint64_t version = 0;
  Status st = msg::read_message<wire::AuthUpdate>(m, "AuthUpdate", [&](wire::AuthUpdate::Reader r) {
    version = r.getVersion();
    for (auto e : r.getEntries()) {
      auto s = e.getSecret();
      keys[e.getEntity()] = std::string(reinterpret_cast<const char *>(s.begin()), s.size());
    }
    return Status::OK();
  });
  if (!st.ok()) {
    log_.warn("osd", st.ToString());
    return;
  }
  // Entities whose key this version removes or changes: once the table no
  // longer holds the old key, their open sessions are closed, so that no op
  // of theirs is served past this version (a queued one is dropped when its
  // turn comes, see Pg::do_op; the peer must authenticate again).
  std::vector<std::pair<std::string, bool>> revoked;  // entity, removed (else changed)
  {
    std::lock_guard lk(auth_mu_);
    for (const auto &[entity, secret] : auth_keys_) {
      auto now = keys.find(entity);
      if (now == keys.end() || now->second != secret)
        revoked.emplace_back(entity, now == keys.end());
    }
    auth_keys_ = std::move(keys);
    auth_version_ = version;
  }
  for (const auto &[entity, removed] : revoked) {
    std::string why = entity + (removed ? "'s key was removed" : "'s key changed") +
                      " in auth version " + std::to_string(version);
    size_t n = messenger_ ? messenger_->close_entity(entity, why) : 0;
    log_.info("osd", why + ": closed " + std::to_string(n) + " session(s)");
  }
}

void OsdDaemon::handle_map_update(const msg::Message &m) {
  MapRef cur = current_map();
  std::vector<cluster::ClusterMap> maps;
  bool gap = false;
  Status st = msg::read_message<wire::MapUpdate>(m, "MapUpdate", [&](wire::MapUpdate::Reader r) {
    std::optional<cluster::ClusterMap> base;
    if (cur) base = cur->map();
    if (r.getHasFull()) {
      auto full = cluster::from_wire(r.getFull());
      if (!full.ok()) return full.status();
      if (!base || full->epoch > base->epoch) {
        base = *full;
        maps.push_back(std::move(*full));
      }
    }
    for (auto inc : r.getIncrementals()) {
      if (!base) {
        gap = true;
        break;
      }
      if (inc.getEpoch() <= base->epoch) continue;
      if (inc.getEpoch() != base->epoch + 1) {
        gap = true;
        break;
      }
      auto next = cluster::apply_incremental(*base, inc);
      if (!next.ok()) return next.status();
      base = *next;
      maps.push_back(std::move(*next));
    }
    return Status::OK();
  });
  if (!st.ok()) {
    log_.error("osd", "bad map update from the monitor: " + st.ToString());
    return;
  }
  for (cluster::ClusterMap &cm : maps) install_map(std::move(cm));
  if (gap) {
    // Incrementals this OSD cannot apply: ask for a full map.
    log_.warn("osd", "map update does not follow epoch " +
                         std::to_string(cur ? cur->epoch() : 0) + "; asking for a full map");
    mon_->send(build_msg<wire::MonSubscribe>(msg::kMsgMonSubscribe, [&](wire::MonSubscribe::Builder b) {
      b.setHaveEpoch(0);
      b.setWantAuth(true);
    }));
  }
}

void OsdDaemon::install_map(cluster::ClusterMap cm) {
  if (!cfg_.fsid.empty() && cm.fsid != cfg_.fsid) {
    log_.error("osd", "ignoring map epoch " + std::to_string(cm.epoch) + " of cluster " + cm.fsid +
                          " (this OSD belongs to " + cfg_.fsid + ")");
    return;
  }
  auto plugin = reg_.find(STRATA_KIND_PLACEMENT, cm.placement_plugin);
  if (!plugin.ok()) {
    log_.error("osd", "map epoch " + std::to_string(cm.epoch) + ": " + plugin.status().ToString());
    return;
  }
  uint64_t epoch = cm.epoch;
  auto view = cluster::MapView::create(std::move(cm), *plugin);
  if (!view.ok()) {
    log_.error("osd", "map epoch " + std::to_string(epoch) + ": " + view.status().ToString());
    return;
  }
  MapRef v = *view;
  MapRef old;
  {
    std::lock_guard lk(map_mu_);
    old = current_;
    current_ = v;
    history_.push_back(v);
    while (history_.size() > kMapHistory) history_.pop_front();
  }
  persist_superblock(v);

  // This run is up once a map shows it with its address and a new up_from.
  if (const cluster::OsdInfo *me = v->map().osd(cfg_.id);
      me && me->up && me->addr == bound_addr_ && me->up_from > stored_up_from_ &&
      me->up_from > me_up_from_.load()) {
    me_up_from_ = me->up_from;
    log_.info("osd", "osd." + std::to_string(cfg_.id) + " is up in map " + std::to_string(v->epoch()));
  }

  // Links to OSDs that went down, restarted or moved are stale.
  std::map<int32_t, uint64_t> peers;
  for (const auto &[id, o] : v->map().osds) {
    if (id == cfg_.id) continue;
    const cluster::OsdInfo *before = old ? old->map().osd(id) : nullptr;
    if (before && (before->up != o.up || before->addr != o.addr || before->up_from != o.up_from))
      links_->reset(id);
    if (o.up) peers[id] = o.up_from;
  }
  heartbeats_.set_peers(peers, HeartbeatTracker::Clock::now());
  advance_shards(v);
  maybe_boot(false);
}

void OsdDaemon::advance_shards(const MapRef &v) {
  for (auto &sh : shards_) {
    OsdShard *s = sh.get();
    s->post([this, s, v] { shard_advance(*s, v); });
  }
}

void OsdDaemon::shard_advance(OsdShard &shard, const MapRef &v) {
  if (shard.map && shard.map->epoch() >= v->epoch()) return;
  shard.map = v;
  drop_forgotten_pgs(shard);
  std::vector<PgId> ids;
  for (const auto &[id, pg] : shard.pgs) ids.push_back(id);
  for (PgId id : ids)
    if (Pg *pg = shard.pg(id)) pg->advance_map(v);
  drop_forgotten_pgs(shard);
  // PGs this OSD now serves but holds nothing of yet.
  for (const auto &[pool_id, pool] : v->map().pools) {
    for (uint32_t seed = 0; seed < pool.pg_num; ++seed) {
      PgId id{pool_id, seed};
      if (&shard_for(id) != &shard || shard.pgs.count(id)) continue;
      std::vector<int32_t> acting = v->acting(id);
      if (std::find(acting.begin(), acting.end(), cfg_.id) == acting.end()) continue;
      auto pg = std::make_unique<Pg>(*this, id, shard.next_generation++);
      Pg *p = pg.get();
      shard.pgs[id] = std::move(pg);
      p->advance_map(v);
    }
  }
  // Messages that waited for this map, in their order.
  std::deque<std::pair<uint64_t, std::function<void()>>> parked;
  parked.swap(shard.waiting_for_map);
  for (auto &[epoch, fn] : parked) {
    if (epoch <= v->epoch()) fn();
    else shard.waiting_for_map.emplace_back(epoch, std::move(fn));
  }
}

}  // namespace strata::osd
