// The PG's core: loading, intervals (map changes), state, persistence and
// the per-object serialisation shared by client ops and recovery.
#include "osd/pg.h"

#include <algorithm>

#include "osd/encoding.h"
#include "osd/pg_msgs.h"
#include "osd/pg_scrub.h"

namespace strata::osd {

Pg::Pg(PgHost &host, PgId pgid, uint64_t generation)
    : host_(host), pgid_(pgid), generation_(generation), coll_(coll_name(pgid)),
      name_("pg " + pg_str(pgid)), log_(coll_) {
  info_.pgid = pgid;
}

Pg::~Pg() {
  // Throttle slots held by recoveries in flight go back to the OSD.
  for (auto &[oid, r] : recovering_)
    if (r.throttled) host_.recovery_throttle().release();
}

Status Pg::load() {
  store::Store &st = host_.store();
  local_ = true;
  auto raw = st.omap_get(coll_, kPgMetaObject, kInfoKey);
  if (raw.ok()) {
    auto info = decode_pg_info(*raw);
    if (!info.ok()) return info.status().Context(name_);
    info_ = std::move(*info);
    info_.pgid = pgid_;
  } else if (raw.status().code() == -ENOENT || raw.status().code() == -ENODATA) {
    // A collection without info never finished its first activation: it
    // cannot vouch for any object.
    info_.backfill_complete = false;
  } else {
    return raw.status().Context(name_ + ": reading PG info");
  }
  if (Status s = log_.load(st, info_.log_tail); !s.ok()) return s;
  info_.last_update = std::max(info_.last_update, log_.head());
  auto miss = st.omap_list(coll_, kPgMetaObject, kMissingKeyPrefix, "m/", 0);
  if (miss.ok()) {
    for (const auto &[k, v] : *miss) {
      auto item = decode_missing_item(v);
      if (!item.ok()) return item.status().Context(name_ + " missing key " + k);
      missing_[k.substr(kMissingKeyPrefix.size())] = *item;
    }
  } else if (miss.status().code() != -ENOENT) {
    return miss.status().Context(name_ + ": reading the missing set");
  }
  auto damaged = st.omap_list(coll_, kPgMetaObject, kDamagedKeyPrefix, "d/", 0);
  if (damaged.ok()) {
    for (const auto &[k, v] : *damaged) damaged_[k.substr(kDamagedKeyPrefix.size())] = v;
  } else if (damaged.status().code() != -ENOENT) {
    return damaged.status().Context(name_ + ": reading the damaged objects");
  }
  return Status::OK();
}

bool Pg::in_acting() const {
  return std::find(acting_.begin(), acting_.end(), host_.whoami()) != acting_.end();
}

const cluster::PoolInfo *Pg::pool() const { return map_ ? map_->map().pool(pgid_.pool) : nullptr; }

// --- map changes --------------------------------------------------------

void Pg::advance_map(const MapRef &map) {
  const cluster::PoolInfo *p = map->map().pool(pgid_.pool);
  if (!p || pgid_.seed >= p->pg_num) {
    remove_local();
    forgotten_ = true;
    host_.forget_pg(pgid_, generation_);
    return;
  }
  std::vector<int32_t> acting = map->acting(pgid_);
  int32_t primary = acting.empty() ? -1 : acting[0];
  std::map<int32_t, uint64_t> up_from;
  for (int32_t o : acting)
    if (const cluster::OsdInfo *oi = map->map().osd(o)) up_from[o] = oi->up_from;

  bool first = !map_;
  bool changed = first || acting != acting_ || primary != primary_ || up_from != acting_up_from_;
  if (!changed) {
    map_ = map;
    if (is_primary()) {
      if (state_ == State::kDown || state_ == State::kIncomplete) {
        start_peering();  // the OSDs it waited for may be back
      } else if (state_ == State::kGetInfo) {
        // An OSD asked that is down now will not answer: stop waiting for
        // it (the plan decides whether what answered is enough).
        const cluster::ClusterMap &m = map_->map();
        for (auto it = queried_.begin(); it != queried_.end();) {
          const cluster::OsdInfo *o = m.osd(*it);
          if (!reports_.count(*it) && (!o || !o->up)) it = queried_.erase(it);
          else ++it;
        }
        send_queries();
        check_peering_done();
      } else if (state_ == State::kActive) {
        if (const cluster::PoolInfo *pl = pool(); pl && acting_.size() >= pl->min_size)
          run_waiting(waiting_min_size_);
      }
    }
    publish();
    return;
  }

  if (first) {
    // After a restart: the interval the OSD was in when it stopped ended
    // somewhere before this map; record it so peering asks its members.
    if (info_.current.first && info_.current.first < map->epoch() && info_.current.acting != acting) {
      PastInterval pi = info_.current;
      pi.last = map->epoch() - 1;
      merge_intervals(info_.past_intervals, {pi});
    }
    // A PG this OSD did not follow: what its own maps say since it booted.
    merge_intervals(info_.past_intervals, host_.history_intervals(pgid_, info_.les));
  } else if (!acting_.empty()) {
    const cluster::PoolInfo *old = pool();
    PastInterval pi;
    pi.first = interval_start_;
    pi.last = map->epoch() - 1;
    pi.acting = acting_;
    pi.primary = primary_;
    pi.maybe_went_rw = primary_ >= 0 && old && acting_.size() >= old->min_size;
    merge_intervals(info_.past_intervals, {pi});
  }
  start_interval(map, acting, primary);
}

void Pg::start_interval(const MapRef &map, const std::vector<int32_t> &acting, int32_t primary) {
  reset_primary_state();
  map_ = map;
  interval_start_ = map->epoch();
  acting_ = acting;
  primary_ = primary;
  acting_up_from_.clear();
  for (int32_t o : acting)
    if (const cluster::OsdInfo *oi = map->map().osd(o)) acting_up_from_[o] = oi->up_from;
  info_.current = PastInterval{interval_start_, 0, acting_, primary_, false};
  if (local_) {
    store::Transaction t;
    persist_info(t);
    queue_local(std::move(t));
  }
  if (is_primary()) {
    start_peering();
  } else {
    state_ = State::kStray;
    state_detail_.clear();
    // Ops queued for a primary this OSD no longer is: send the clients on.
    run_waiting(waiting_active_);
  }
  publish();
}

void Pg::reset_primary_state() {
  std::deque<std::function<void()>> requeue;
  // Writes in flight: their ops run again once the PG is active, and the
  // PG log answers those that did get logged.
  for (auto &[tid, w] : in_flight_) {
    host_.untrack_write(tid);
    if (w->claim()) {
      ClientOpRef op = std::static_pointer_cast<ClientOp>(w->op);
      requeue.push_back([this, op] { do_op(op); });
    }
  }
  in_flight_.clear();
  for (auto &[oid, s] : slots_)
    for (auto &fn : s.waiters) requeue.push_back(std::move(fn));
  slots_.clear();
  for (auto &fn : waiting_min_size_) requeue.push_back(std::move(fn));
  waiting_min_size_.clear();
  for (auto &[oid, r] : recovering_)
    if (r.throttled) host_.recovery_throttle().release();
  recovering_.clear();
  read_repairing_.clear();
  unfound_.clear();
  if (scrub_) {
    for (auto &fn : scrub_->waiters) requeue.push_back(std::move(fn));
    scrub_->waiters.clear();
    finish_scrub(-EAGAIN, "interrupted by a map change");
  }
  peers_.clear();
  strays_.clear();
  reports_.clear();
  queried_.clear();
  intervals_.clear();
  plan_ = PeeringPlan();
  self_scan_ = SelfScan();
  clean_ = false;
  while (!requeue.empty()) {
    waiting_active_.push_front(std::move(requeue.back()));
    requeue.pop_back();
  }
}

void Pg::run_waiting(std::deque<std::function<void()>> &q) {
  std::deque<std::function<void()>> now;
  now.swap(q);
  for (auto &fn : now) fn();
}

void Pg::on_peer_reset(int32_t osd) {
  if (!is_primary() || state_ == State::kInitial) return;
  bool involved = std::find(acting_.begin(), acting_.end(), osd) != acting_.end() ||
                  queried_.count(osd) || strays_.count(osd);
  if (!involved) return;
  host_.log().info("osd", name_ + ": link to osd." + std::to_string(osd) +
                              " dropped; peering again");
  reset_primary_state();
  start_peering();
  publish();
}

void Pg::on_tick() {
  if (!is_primary()) return;
  auto now = std::chrono::steady_clock::now();
  if (host_.log().level() <= STRATA_LOG_DEBUG && state_ == State::kGetInfo) {
    std::string waiting;
    for (int32_t q : queried_)
      if (!reports_.count(q)) waiting += " osd." + std::to_string(q);
    host_.log().debug("osd", name_ + " peering since epoch " + std::to_string(interval_start_) +
                                 ": waiting for" + (waiting.empty() ? " nothing" : waiting) + ", " +
                                 std::to_string(local_pending_) + " local transactions pending");
  }
  if (host_.log().level() <= STRATA_LOG_DEBUG) {
    size_t waiters = 0;
    for (const auto &[oid, s] : slots_) waiters += s.waiters.size();
    if (!in_flight_.empty() || waiters || !waiting_active_.empty() || !waiting_min_size_.empty() ||
        !recovering_.empty())
      host_.log().debug("osd", name_ + " " + state_string() + ": " + std::to_string(in_flight_.size()) +
                                   " writes in flight, " + std::to_string(waiters) + " ops wait for objects, " +
                                   std::to_string(waiting_active_.size()) + " for activation, " +
                                   std::to_string(waiting_min_size_.size()) + " for min_size, " +
                                   std::to_string(recovering_.size()) + " recoveries");
  }
  auto grace = std::chrono::milliseconds(host_.config().heartbeat_grace_ms);
  if (state_ == State::kGetInfo && now - peering_since_ > 2 * grace) {
    // Lost queries are re-sent (a peer that never answers is marked down).
    queried_.clear();
    for (const auto &[osd, r] : reports_) queried_.insert(osd);
    peering_since_ = now;
    send_queries();
    check_peering_done();
  } else if (state_ == State::kActive) {
    recover();
    // Recount only a PG that took writes since (or now and then, for
    // recovery and backfill, which do not move the log head): the count
    // runs on the shard thread, and every PG of the shard waits for it.
    auto since = now - counted_at_;
    if ((since > std::chrono::seconds(10) && info_.last_update != counted_at_version_) ||
        since > std::chrono::seconds(60))
      count_objects();
  }
  publish();
}

// --- persistence ----------------------------------------------------------

void Pg::persist_info(store::Transaction &t) {
  info_.last_update = std::max(info_.last_update, log_.head());
  info_.log_tail = log_.tail();
  t.omap_set(coll_, kPgMetaObject, kInfoKey, encode_pg_info(info_));
}

void Pg::ensure_local(store::Transaction &t) {
  if (local_) return;
  t.mkcoll(coll_);
  local_ = true;
}

void Pg::queue_local(store::Transaction t, std::function<void(Pg &)> on_durable) {
  if (t.empty()) {
    if (on_durable) on_durable(*this);
    return;
  }
  ++local_pending_;
  PgHost *host = &host_;
  PgId pg = pgid_;
  uint64_t gen = generation_;
  Status st = host_.store().queue(
      std::move(t), [host, pg, gen, cb = std::move(on_durable)](const Status &s) {
        if (!s.ok()) {
          host->fatal(s.Context("pg " + pg_str(pg)));
          return;
        }
        host->post_to_pg(pg, gen, [cb](Pg &p) {
          p.local_done();
          if (cb) cb(p);
        });
      });
  if (!st.ok()) host_.fatal(st.Context(name_));
}

void Pg::queue_then_reply(store::Transaction t, const msg::ConnectionRef &conn,
                          msg::Message reply, const char *what, store::Store::Ack when) {
  ++local_pending_;
  PgHost *host = &host_;
  PgId pg = pgid_;
  uint64_t gen = generation_;
  Status st = host_.store().queue(
      std::move(t),
      [host, pg, gen, conn, what, reply = std::move(reply)](const Status &s) mutable {
        if (!s.ok()) {
          host->fatal(s.Context("pg " + pg_str(pg) + " " + what));
          return;
        }
        conn->send(std::move(reply));
        host->post_to_pg(pg, gen, [](Pg &p) { p.local_done(); });
      },
      when);
  if (!st.ok()) host_.fatal(st.Context(name_ + " " + what));
}

void Pg::local_done() {
  if (local_pending_ > 0) --local_pending_;
  if (local_pending_ == 0 && !on_drained_.empty()) {
    std::vector<std::function<void()>> fns;
    fns.swap(on_drained_);
    for (auto &fn : fns) fn();
  }
}

void Pg::when_local_drained(std::function<void()> fn) {
  if (local_pending_ == 0) fn();
  else on_drained_.push_back(std::move(fn));
}

void Pg::remove_local() {
  primary_ = -1;
  acting_.clear();
  reset_primary_state();
  run_waiting(waiting_active_);  // not primary any more: clients retry
  if (local_) {
    store::Transaction t;
    t.rmcoll(coll_);
    queue_local(std::move(t));
    local_ = false;
  }
  state_ = State::kStray;
}

void Pg::on_remove(const InMsgRef &) {
  // Only a copy outside the acting set goes; a late message must not
  // delete a copy the PG needs again.
  if (in_acting() || !local_) return;
  host_.log().info("osd", name_ + ": removing the stray copy (the PG is clean elsewhere)");
  remove_local();
  forgotten_ = true;
  host_.forget_pg(pgid_, generation_);
}

// --- per-object serialisation --------------------------------------------

void Pg::release_slot_if_idle(const std::string &oid) {
  auto it = slots_.find(oid);
  if (it != slots_.end() && !it->second.busy() && it->second.waiters.empty()) slots_.erase(it);
}

void Pg::kick(const std::string &oid) {
  // Runs waiters in order until one makes the object busy again.
  for (;;) {
    auto it = slots_.find(oid);
    if (it == slots_.end()) return;
    if (it->second.busy() || it->second.waiters.empty()) {
      release_slot_if_idle(oid);
      return;
    }
    auto fn = std::move(it->second.waiters.front());
    it->second.waiters.pop_front();
    fn();
  }
}

// --- reporting --------------------------------------------------------------

bool Pg::is_clean() const {
  const cluster::PoolInfo *p = pool();
  if (state_ != State::kActive || !p || acting_.size() < p->size) return false;
  if (!missing_.empty() || !recovering_.empty()) return false;
  for (const auto &[osd, ps] : peers_)
    if (ps.backfill || !ps.missing.empty()) return false;
  return true;
}

std::string Pg::state_string() const {
  switch (state_) {
    case State::kInitial: return "unknown";
    case State::kStray: return "stray";
    case State::kReplica: return "replica";
    case State::kGetInfo: return "peering";
    case State::kScanSelf: return "peering+backfilling";
    case State::kDown: return "down";
    case State::kIncomplete: return "incomplete";
    case State::kActive: break;
  }
  const cluster::PoolInfo *p = pool();
  bool undersized = p && acting_.size() < p->size;
  bool below_min = p && acting_.size() < p->min_size;
  bool recovering = !missing_.empty() || !recovering_.empty();
  bool backfilling = false, toofull = false;
  for (const auto &[osd, ps] : peers_) {
    recovering |= !ps.missing.empty();
    backfilling |= ps.backfill;
    toofull |= (ps.backfill || !ps.missing.empty()) && too_full_for_recovery(osd);
  }
  std::string s = below_min ? "peered" : "active";
  if (!undersized && !recovering && !backfilling) s += "+clean";
  if (undersized) s += "+undersized";
  if (undersized || recovering || backfilling) s += "+degraded";
  if (recovering) s += "+recovering";
  if (backfilling) s += "+backfilling";
  if (toofull) s += "+backfill_toofull";
  if (!unfound_.empty()) s += "+unfound";
  if (!damaged_.empty()) s += "+inconsistent";
  if (scrub_) s += scrub_->deep ? "+scrubbing+deep" : "+scrubbing";
  return s;
}

void Pg::publish() {
  PgStatSnap s;
  s.pgid = pgid_;
  s.primary = is_primary();
  s.state = state_string();
  s.objects = objects_;
  s.bytes = bytes_;
  s.last_update = info_.last_update;
  s.acting = acting_;
  s.epoch = map_ ? map_->epoch() : 0;
  for (const auto &[oid, why] : damaged_) {
    if (s.damaged.size() == kMaxDamagedReported) break;
    s.damaged.emplace_back(oid, why);
  }
  s.damaged_total = damaged_.size();
  s.read_repairs = read_repairs_;
  host_.publish_stat(s);
}

void Pg::count_objects() {
  counted_at_ = std::chrono::steady_clock::now();
  counted_at_version_ = info_.last_update;
  auto names = host_.store().list_objects(coll_);
  if (!names.ok()) return;
  uint64_t n = 0;
  for (const std::string &o : *names)
    if (o != kPgMetaObject) ++n;
  // Bytes from the sizes of an evenly spaced sample: the figure is for
  // `status`, and a stat is not cheap everywhere (the xfs backend opens the
  // object's file and scans its xattrs), so stat'ing every object here held
  // the shard thread, and the client ops of all its PGs, for seconds.
  constexpr uint64_t kSample = 32;
  uint64_t step = std::max<uint64_t>(1, n / kSample);
  uint64_t i = 0, sampled = 0, bytes = 0;
  for (const std::string &o : *names) {
    if (o == kPgMetaObject) continue;
    if (i++ % step != 0) continue;
    if (auto st = host_.store().stat(coll_, o); st.ok()) {
      bytes += st->size;
      ++sampled;
    }
  }
  objects_ = n;
  bytes_ = sampled ? bytes / sampled * n : 0;
}

}  // namespace strata::osd
