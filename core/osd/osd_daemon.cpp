// OSD start-up and shutdown, and the services PGs get from the daemon.
#include "osd/osd_daemon.h"

#include <unistd.h>

#include <algorithm>

#include "osd/encoding.h"
#include "osd/osd_identity.h"
#include "store/store_space.h"

namespace strata::osd {

namespace {
constexpr std::string_view kMapKey = "map";
}  // namespace

OsdDaemon::OsdDaemon(OsdConfig cfg, store::StoreSettings settings, const host::PluginRegistry &reg,
                     Logger &log, Env &env)
    : cfg_(std::move(cfg)),
      settings_(settings),
      reg_(reg),
      log_(log),
      env_(env),
      throttle_(cfg_.recovery_max_active),
      control_({.name = "osd-control",
                .tick_interval = std::chrono::milliseconds(cfg_.heartbeat_interval_ms),
                .tick_at_start = true,
                .on_tick = [this] { tick(); }}) {}

OsdDaemon::~OsdDaemon() { stop(); }

Status OsdDaemon::start() {
  std::string who = "osd." + std::to_string(cfg_.id);
  auto ident = OsdIdentity::load(cfg_.store_dir);
  if (!ident.ok()) return ident.status();
  if (Status st = ident->check(cfg_.id, cfg_.fsid, cfg_.store_dir); !st.ok()) return st;
  if (cfg_.fsid.empty()) cfg_.fsid = ident->cluster_fsid;

  if (cfg_.keyring.empty()) return Status::Error(EINVAL, who + ": no keyring in the config");
  auto kr = msg::Keyring::load_file(cfg_.keyring);
  if (!kr.ok()) return kr.status();
  keyring_ = std::move(*kr);
  auto secret = keyring_.secret(who);
  if (!secret) return Status::Error(ENOKEY, "keyring " + cfg_.keyring + " has no key for " + who);

  auto st = store::Store::open(reg_, cfg_.store_dir, settings_, log_);
  if (!st.ok()) return st.status().Context(who + ": opening the store");
  store_ = std::move(*st);
  store_fsid_ = store_->meta().fsid;

  for (int i = 0; i < cfg_.op_threads; ++i) shards_.push_back(std::make_unique<OsdShard>(i));
  if (Status s = load_superblock(); !s.ok()) return s;
  if (Status s = load_pgs(); !s.ok()) return s;

  stage_pool_ = std::make_unique<WorkQueue>(WorkQueue::Options{
      .name = "osd-stage", .threads = cfg_.stage_threads, .on_stop = WorkQueue::OnStop::kDrain});
  stage_pool_->start();
  msg::MessengerOptions mo;
  mo.io_threads = cfg_.msg_threads;
  messenger_ = std::make_unique<msg::Messenger>(
      who, *secret, [this](const std::string &e) { return secret_of(e); }, log_, mo);
  msg::Handlers h;
  h.on_message = [this](const msg::ConnectionRef &c, msg::Message &&m) { on_message(c, std::move(m)); };
  h.on_close = [this](const msg::ConnectionRef &c, const std::string &r) { on_close(c, r); };
  messenger_->set_handlers(std::move(h));
  auto bound = messenger_->listen(cfg_.addr, cfg_.port);
  if (!bound.ok()) return bound.status().Context(who + ": listening on " + cfg_.addr);
  bound_addr_ = *bound;
  messenger_->start();

  links_ = std::make_unique<PeerLinks>(
      *messenger_, log_,
      [this](int32_t osd) -> std::string {
        MapRef m = current_map();
        const cluster::OsdInfo *o = m ? m->map().osd(osd) : nullptr;
        return o && o->up ? o->addr : std::string();
      },
      [this](int32_t osd) {
        for (auto &sh : shards_) {
          OsdShard *s = sh.get();
          s->post([s, osd] {
            for (auto &[id, pg] : s->pgs) pg->on_peer_reset(osd);
          });
        }
      });
  for (auto &sh : shards_) sh->start();
  // PGs first see the map the previous run stored, so that the interval
  // they were in when it stopped is closed properly by the next one.
  if (MapRef m = current_map()) advance_shards(m);

  control_.start();
  mon_ = std::make_unique<MonSession>(
      *messenger_, log_, cfg_.mon_addr, [this] { return on_mon_connect(); },
      msg::SessionKeepalive(std::chrono::milliseconds(cfg_.mon_keepalive_interval_ms),
                            std::chrono::milliseconds(cfg_.mon_keepalive_timeout_ms)));
  mon_->start();
  started_ = true;
  log_.info("osd", who + " serving at " + bound_addr_ + " (store " + cfg_.store_dir + ", " +
                       std::to_string(cfg_.op_threads) + " op threads)");
  return Status::OK();
}

Status OsdDaemon::stop() {
  if (!store_) return Status::OK();
  if (mon_) mon_->stop();
  control_.stop();
  if (messenger_) messenger_->stop();
  if (links_) links_->stop();
  if (stage_pool_) stage_pool_->stop();  // its last deliveries go to the shards
  for (auto &sh : shards_) sh->stop();
  // Store callbacks still running post to stopped shards: dropped.
  Status st = store_->close();
  shards_.clear();
  stage_pool_.reset();
  links_.reset();
  mon_.reset();
  messenger_.reset();
  store_.reset();
  if (started_) log_.info("osd", "osd." + std::to_string(cfg_.id) + " stopped");
  started_ = false;
  return st;
}

// --- the superblock: the last map, so a restart knows where it left off ----

Status OsdDaemon::load_superblock() {
  auto colls = store_->list_collections();
  if (!colls.ok()) return colls.status();
  if (std::find(colls->begin(), colls->end(), kOsdMetaColl) == colls->end()) {
    store::Transaction t;
    t.mkcoll(kOsdMetaColl);
    return store_->submit(std::move(t));
  }
  auto raw = store_->omap_get(kOsdMetaColl, kSuperblockObject, kMapKey);
  if (!raw.ok()) return Status::OK();  // no map yet
  auto cm = cluster::decode_map(*raw);
  if (!cm.ok()) return cm.status().Context("osd." + std::to_string(cfg_.id) + " superblock map");
  auto plugin = reg_.find(STRATA_KIND_PLACEMENT, cm->placement_plugin);
  if (!plugin.ok()) return plugin.status();
  if (const cluster::OsdInfo *me = cm->osd(cfg_.id)) stored_up_from_ = me->up_from;
  auto view = cluster::MapView::create(std::move(*cm), *plugin);
  if (!view.ok()) return view.status();
  std::lock_guard lk(map_mu_);
  current_ = *view;
  history_.push_back(current_);
  return Status::OK();
}

void OsdDaemon::persist_superblock(const MapRef &v) {
  store::Transaction t;
  t.omap_set(kOsdMetaColl, kSuperblockObject, kMapKey, cluster::encode_map(v->map()));
  Status st = store_->queue(std::move(t), [this](const Status &s) {
    if (!s.ok()) fatal(s.Context("superblock"));
  });
  if (!st.ok()) fatal(st.Context("superblock"));
}

Status OsdDaemon::load_pgs() {
  auto colls = store_->list_collections();
  if (!colls.ok()) return colls.status();
  size_t n = 0;
  for (const std::string &c : *colls) {
    auto pgid = parse_coll_name(c);
    if (!pgid) continue;
    OsdShard &sh = shard_for(*pgid);
    auto pg = std::make_unique<Pg>(*this, *pgid, sh.next_generation++);
    if (Status st = pg->load(); !st.ok()) return st;
    sh.pgs[*pgid] = std::move(pg);
    ++n;
  }
  log_.info("osd", "osd." + std::to_string(cfg_.id) + " loaded " + std::to_string(n) + " PGs");
  return Status::OK();
}

// --- PgHost ------------------------------------------------------------------

OsdShard &OsdDaemon::shard_for(PgId pg) {
  uint64_t h = (uint64_t(pg.pool) * 0x9e3779b97f4a7c15ull) ^ (uint64_t(pg.seed) * 0xc2b2ae3d27d4eb4full);
  h ^= h >> 29;
  return *shards_[h % shards_.size()];
}

MapRef OsdDaemon::current_map() {
  std::lock_guard lk(map_mu_);
  return current_;
}

bool OsdDaemon::is_me_up(const cluster::MapView &map) const {
  const cluster::OsdInfo *me = map.map().osd(cfg_.id);
  uint64_t from = me_up_from_.load();
  return me && me->up && from != 0 && me->up_from == from && me->addr == bound_addr_;
}

void OsdDaemon::send_to_osd(int32_t osd, msg::Message m) {
  if (links_) links_->send(osd, std::move(m));
}

std::function<void()> OsdDaemon::for_pg(PgId pg, uint64_t generation,
                                        std::function<void(Pg &)> fn) {
  OsdShard *s = &shard_for(pg);
  return [s, pg, generation, fn = std::move(fn)] {
    Pg *p = s->pg(pg);
    if (p && p->generation() == generation) fn(*p);
  };
}

void OsdDaemon::post_to_pg(PgId pg, uint64_t generation, std::function<void(Pg &)> fn) {
  shard_for(pg).post(for_pg(pg, generation, std::move(fn)));
}

void OsdDaemon::forget_pg(PgId pg, uint64_t generation) {
  OsdShard &sh = shard_for(pg);
  OsdShard *s = &sh;
  // Posted: the PG asks from inside one of its own calls. A map that the
  // shard applies before this runs drops it first (drop_forgotten_pgs).
  sh.post([this, s, pg, generation] {
    auto it = s->pgs.find(pg);
    if (it == s->pgs.end() || it->second->generation() != generation) return;
    drop_pg(*s, it);
  });
}

void OsdDaemon::drop_pg(OsdShard &shard, std::map<PgId, std::unique_ptr<Pg>>::iterator it) {
  PgId id = it->first;
  shard.pgs.erase(it);
  std::lock_guard lk(stats_mu_);
  stats_.erase(id);
}

void OsdDaemon::drop_forgotten_pgs(OsdShard &shard) {
  for (auto it = shard.pgs.begin(); it != shard.pgs.end();) {
    auto next = std::next(it);
    if (it->second->forgotten()) drop_pg(shard, it);
    it = next;
  }
}

std::vector<PastInterval> OsdDaemon::history_intervals(PgId pg, uint64_t since) {
  std::vector<MapRef> maps;
  {
    std::lock_guard lk(map_mu_);
    for (const MapRef &m : history_)
      if (m->epoch() >= since) maps.push_back(m);
  }
  std::vector<PastInterval> out;
  PastInterval cur;
  bool have = false;
  for (const MapRef &m : maps) {
    const cluster::PoolInfo *pool = m->map().pool(pg.pool);
    std::vector<int32_t> acting = pool && pg.seed < pool->pg_num ? m->acting(pg) : std::vector<int32_t>{};
    int32_t primary = acting.empty() ? -1 : acting[0];
    if (have && acting == cur.acting && primary == cur.primary) {
      cur.last = m->epoch();
      continue;
    }
    if (have && !cur.acting.empty()) out.push_back(cur);
    cur = PastInterval{m->epoch(), m->epoch(), acting, primary,
                       pool && primary >= 0 && acting.size() >= pool->min_size};
    have = true;
  }
  // The last interval is the current one: not past.
  return out;
}

void OsdDaemon::fatal(const Status &st) {
  log_.error("osd", "osd." + std::to_string(cfg_.id) + " stopping on a fatal error: " + st.ToString());
  // A store that cannot persist must not acknowledge anything more; the
  // monitor marks this OSD down and its peers recover from the others.
  ::_exit(3);
}

double OsdDaemon::disk_used_ratio(uint64_t incoming) {
  // statvfs again after 50 ms or 4 MiB queued, whichever comes first (a
  // statvfs per op was one syscall per op); in between, what was queued
  // since counts as used: a burst of writes, acknowledged once journaled,
  // reaches the disk later than the check that let it in.
  constexpr auto kMaxAge = std::chrono::milliseconds(50);
  constexpr uint64_t kMaxQueued = 4u << 20;
  auto now = std::chrono::steady_clock::now();
  uint64_t queued = store_->queued_data_bytes();
  std::lock_guard lk(full_check_.mu);
  if (!full_check_.valid || now - full_check_.at >= kMaxAge ||
      queued - full_check_.queued_bytes >= kMaxQueued) {
    auto space = store_->space();
    full_check_.total = space.ok() ? space->total_bytes : 0;
    full_check_.used = space.ok() ? space->used_bytes : 0;
    full_check_.valid = true;
    full_check_.at = now;
    full_check_.queued_bytes = queued;
  }
  // A total of 0 (statvfs failed) reads as empty: the backend's own ENOSPC says.
  return store::used_ratio(
      {full_check_.total, full_check_.used + (queued - full_check_.queued_bytes) + incoming});
}

bool OsdDaemon::failsafe_full() { return disk_used_ratio() >= cfg_.failsafe_full_ratio; }

bool OsdDaemon::disk_full(uint64_t incoming) {
  const bool full = disk_used_ratio(incoming) >= cfg_.full_ratio;
  if (full) full_since_report_.store(true, std::memory_order_relaxed);
  return full;
}

void OsdDaemon::publish_stat(const PgStatSnap &s) {
  std::lock_guard lk(stats_mu_);
  if (s.primary) stats_[s.pgid] = s;
  else stats_.erase(s.pgid);
}

}  // namespace strata::osd
