// Peering: the primary asks every OSD that may hold the PG (the prior set)
// for its info, log and missing set, lets plan_peering() pick the
// authoritative log and work out what each acting member lacks, brings its
// own copy up to date (adopting the log, or scanning the authoritative copy
// when it must backfill itself), and activates the replicas.
#include <algorithm>

#include "osd/encoding.h"
#include "osd/object_digest.h"
#include "osd/op_exec.h"
#include "osd/pg.h"
#include "osd/pg_msgs.h"

namespace strata::osd {

namespace {
constexpr uint32_t kSelfScanChunk = 512;
constexpr uint32_t kListBatch = 256;
}  // namespace

void Pg::start_peering() {
  if (!host_.is_me_up(*map_)) {
    // The map still shows an earlier run of this OSD: wait for the map
    // that marks this one up (it starts a new interval).
    state_ = State::kStray;
    state_detail_ = "waiting to be marked up";
    return;
  }
  state_ = State::kGetInfo;
  state_detail_.clear();
  peering_since_ = std::chrono::steady_clock::now();
  reports_.clear();
  queried_.clear();
  intervals_ = info_.past_intervals;
  send_queries();
  check_peering_done();
}

void Pg::send_queries() {
  const cluster::ClusterMap &m = map_->map();
  auto is_up = [&](int32_t o) {
    const cluster::OsdInfo *oi = m.osd(o);
    return oi && oi->up;
  };
  uint64_t les = std::max(max_les(reports_), local_ ? info_.les : 0);
  PriorSet ps = build_prior_set(acting_, intervals_, les, is_up);
  for (int32_t osd : ps.probe) {
    if (osd == host_.whoami() || queried_.count(osd)) continue;
    queried_.insert(osd);
    host_.send_to_osd(osd, build_msg<wire::PgQuery>(msg::kMsgPgQuery, [&](wire::PgQuery::Builder b) {
                        stamp(b);
                        b.setFrom(host_.whoami());
                      }));
  }
}

PeerReport Pg::own_report() const {
  PeerReport r;
  r.has_pg = local_;
  r.info = info_;
  r.info.last_update = std::max(info_.last_update, log_.head());
  r.info.log_tail = log_.tail();
  r.log.assign(log_.entries().begin(), log_.entries().end());
  r.missing = missing_;
  return r;
}

void Pg::on_query(const InMsgRef &in) {
  auto q = in->root<wire::PgQuery>();
  uint64_t echo = q.getIntervalEpoch();
  msg::ConnectionRef conn = in->conn;
  // Answer with durable state only: transactions still in the store's
  // queue might not survive a crash, and the primary must not count on them.
  when_local_drained([this, conn, echo] {
    PeerReport r = own_report();
    conn->send(build_msg<wire::PgNotify>(msg::kMsgPgNotify, [&](wire::PgNotify::Builder b) {
      b.setPool(pgid_.pool);
      b.setSeed(pgid_.seed);
      b.setMapEpoch(map_ ? map_->epoch() : 0);
      b.setIntervalEpoch(echo);
      b.setFrom(host_.whoami());
      b.setHasPg(r.has_pg);
      to_wire(r.info, b.initInfo());
      log_to_wire(r.log, b.initLog(static_cast<unsigned>(r.log.size())));
      missing_to_wire(r.missing, b.initMissing(static_cast<unsigned>(r.missing.size())));
    }));
  });
}

void Pg::on_notify(const InMsgRef &in) {
  auto n = in->root<wire::PgNotify>();
  if (!is_primary() || state_ != State::kGetInfo || n.getIntervalEpoch() != interval_start_) return;
  int32_t from = n.getFrom();
  host_.log().debug("osd", name_ + ": notify from osd." + std::to_string(from) +
                               (n.getHasPg() ? "" : " (no copy)"));
  if (!queried_.count(from)) return;
  PeerReport r;
  r.has_pg = n.getHasPg();
  r.info = from_wire(n.getInfo());
  r.log = log_from_wire(n.getLog());
  r.missing = missing_from_wire(n.getMissing());
  if (r.has_pg) merge_intervals(intervals_, r.info.past_intervals);
  reports_[from] = std::move(r);
  send_queries();  // its intervals may name OSDs not asked yet
  check_peering_done();
}

void Pg::check_peering_done() {
  if (state_ != State::kGetInfo) return;
  for (int32_t q : queried_)
    if (!reports_.count(q)) return;
  host_.log().debug("osd", name_ + ": every notify in (" + std::to_string(reports_.size()) +
                               "), " + std::to_string(local_pending_) + " local transactions pending");
  if (local_pending_ > 0) {
    uint64_t interval = interval_start_;
    when_local_drained([this, interval] {
      if (interval_start_ == interval) check_peering_done();
    });
    return;
  }
  int32_t me = host_.whoami();
  reports_[me] = own_report();
  plan_ = plan_peering(me, acting_, reports_, intervals_);
  if (plan_.outcome != PeeringPlan::Outcome::kActivate) {
    state_ = plan_.outcome == PeeringPlan::Outcome::kDown ? State::kDown : State::kIncomplete;
    state_detail_ = plan_.detail;
    host_.log().warn("osd", name_ + " is " + state_string() + ": " + plan_.detail);
    publish();
    return;
  }
  const PeerRecovery &mine = plan_.peers[me];
  if (mine.backfill) {
    start_self_scan();
    return;
  }
  adopt_plan_locally(mine);
  activate();
}

void Pg::adopt_plan_locally(const PeerRecovery &rec) {
  store::Transaction t;
  ensure_local(t);
  if (plan_.auth != host_.whoami()) {
    log_.rewind(rec.rewind_to, t);
    for (const LogEntry &e : rec.append)
      if (e.version > log_.head()) log_.append(e, t);
  }
  for (const auto &[oid, item] : rec.missing) {
    auto it = missing_.find(oid);
    if (it != missing_.end() && it->second == item) continue;
    missing_[oid] = item;
    t.omap_set(coll_, kPgMetaObject, missing_key(oid), encode_missing_item(item));
  }
  persist_info(t);
  queue_local(std::move(t));
}

void Pg::activate() {
  int32_t me = host_.whoami();
  info_.les = map_->epoch();
  info_.past_intervals.clear();
  info_.backfill_complete = true;
  info_.last_update = std::max(log_.head(), plan_.last_update);
  store::Transaction t;
  ensure_local(t);
  persist_info(t);
  queue_local(std::move(t));

  peers_.clear();
  size_t backfills = 0, missing = missing_.size();
  for (int32_t r : acting_) {
    if (r == me) continue;
    const PeerRecovery &rec = plan_.peers[r];
    PeerState ps;
    ps.backfill = rec.backfill;
    if (!rec.backfill) ps.missing = rec.missing;
    backfills += rec.backfill;
    missing += ps.missing.size();
    host_.send_to_osd(r, build_msg<wire::PgActivate>(msg::kMsgPgActivate, [&](wire::PgActivate::Builder b) {
                        stamp(b);
                        b.setFrom(me);
                        b.setLastEpochStarted(info_.les);
                        b.setBackfill(rec.backfill);
                        to_wire(rec.rewind_to, b.initRewindTo());
                        log_to_wire(rec.append, b.initEntries(static_cast<unsigned>(rec.append.size())));
                        missing_to_wire(ps.missing, b.initMissing(static_cast<unsigned>(ps.missing.size())));
                        to_wire(plan_.log_tail, b.initLogTail());
                      }));
    peers_[r] = std::move(ps);
  }
  strays_.clear();
  for (const auto &[osd, r] : reports_)
    if (r.has_pg && std::find(acting_.begin(), acting_.end(), osd) == acting_.end())
      strays_.insert(osd);
  state_ = State::kActive;
  state_detail_.clear();
  count_objects();
  host_.log().info("osd", name_ + " active at epoch " + std::to_string(map_->epoch()) +
                              " (auth osd." + std::to_string(plan_.auth) + ", last_update " +
                              info_.last_update.str() + ", " + std::to_string(missing) +
                              " objects to recover, " + std::to_string(backfills) + " backfills)");
  run_waiting(waiting_active_);
  recover();
  publish();
}

// --- replica side -------------------------------------------------------------

void Pg::on_activate(const InMsgRef &in) {
  if (stale(in->map_epoch) || is_primary()) return;
  auto a = in->root<wire::PgActivate>();
  apply_activate(a.getLastEpochStarted(), a.getBackfill(), from_wire(a.getRewindTo()),
                 log_from_wire(a.getEntries()), missing_from_wire(a.getMissing()),
                 from_wire(a.getLogTail()));
  state_ = State::kReplica;
  state_detail_.clear();
  publish();
}

void Pg::apply_activate(uint64_t les, bool backfill, const EVersion &rewind_to,
                        std::vector<LogEntry> entries, MissingSet missing, const EVersion &log_tail) {
  store::Transaction t;
  ensure_local(t);
  // The primary's view of what this copy lacks replaces the old one.
  t.omap_rm_range(coll_, kPgMetaObject, kMissingKeyPrefix, "m/");
  missing_.clear();
  if (backfill) {
    // Objects are compared and copied one by one; until then this copy is
    // no source for anything.
    log_.reset(std::move(entries), log_tail, t);
    info_.backfill_complete = false;
  } else {
    log_.rewind(rewind_to, t);
    for (const LogEntry &e : entries)
      if (e.version > log_.head()) log_.append(e, t);
    missing_ = std::move(missing);
    for (const auto &[oid, item] : missing_)
      t.omap_set(coll_, kPgMetaObject, missing_key(oid), encode_missing_item(item));
  }
  info_.les = les;
  info_.past_intervals.clear();
  info_.last_update = log_.head();
  persist_info(t);
  queue_local(std::move(t));
}

// --- the primary backfilling itself -------------------------------------------

void Pg::start_self_scan() {
  state_ = State::kScanSelf;
  state_detail_ = "copying from osd." + std::to_string(plan_.auth);
  self_scan_ = SelfScan();
  host_.log().info("osd", name_ + ": this copy is too far behind the log; comparing it with osd." +
                              std::to_string(plan_.auth));
  self_scan_step();
  publish();
}

void Pg::self_scan_step() {
  self_scan_.tid = next_tid_++;
  host_.send_to_osd(plan_.auth, build_msg<wire::PgScan>(msg::kMsgPgScan, [&](wire::PgScan::Builder b) {
                      stamp(b);
                      b.setTid(self_scan_.tid);
                      b.setFrom(host_.whoami());
                      b.setStartAfter(self_scan_.cursor);
                      b.setLimit(kSelfScanChunk);
                      b.setDeep(false);
                    }));
}

void Pg::finish_self_scan() {
  store::Transaction t;
  ensure_local(t);
  log_.reset(plan_.auth_log, plan_.log_tail, t);
  t.omap_rm_range(coll_, kPgMetaObject, kMissingKeyPrefix, "m/");
  missing_.clear();
  std::set<std::string> auth_names;
  for (const auto &[oid, ver] : self_scan_.auth_items) {
    auth_names.insert(oid);
    auto st = load_object_state(host_.store(), coll_, oid);
    if (st.ok() && st->exists && st->oi.version == ver) continue;
    missing_[oid] = MissingItem{ver, false};
  }
  // What the authoritative copy itself still lacks, this one lacks too.
  if (auto it = reports_.find(plan_.auth); it != reports_.end())
    for (const auto &[oid, item] : it->second.missing) missing_[oid] = item;
  for (const auto &[oid, item] : missing_)
    t.omap_set(coll_, kPgMetaObject, missing_key(oid), encode_missing_item(item));
  bool more = true;
  std::string after;
  while (more) {
    for (const std::string &o : list_range(after, "", kListBatch, &more)) {
      after = o;
      if (!auth_names.count(o) && !missing_.count(o)) t.remove(coll_, o);
    }
  }
  info_.backfill_complete = true;
  info_.last_update = plan_.last_update;
  queue_local(std::move(t));
  self_scan_ = SelfScan();
  activate();
}

// --- listings --------------------------------------------------------------------

std::vector<std::string> Pg::list_range(const std::string &after, const std::string &end,
                                        size_t limit, bool *more) {
  std::vector<std::string> out;
  *more = false;
  if (!local_) return out;
  std::string cursor = after;
  for (;;) {
    uint64_t want = limit ? limit - out.size() + 1 : kListBatch;
    auto names = host_.store().list_objects(coll_, cursor, want);
    if (!names.ok()) return out;
    for (std::string &n : *names) {
      cursor = n;
      if (n == kPgMetaObject) continue;
      if (!end.empty() && n > end) return out;
      if (limit && out.size() == limit) {
        *more = true;
        return out;
      }
      out.push_back(std::move(n));
    }
    if (names->size() < want) return out;
  }
}

std::vector<Pg::ScanItemT> Pg::scan_items(const std::string &after, const std::string &end,
                                          size_t limit, bool deep, bool *more) {
  std::vector<ScanItemT> items;
  for (std::string &oid : list_range(after, end, limit, more)) {
    ScanItemT it;
    it.oid = std::move(oid);
    auto st = load_object_state(host_.store(), coll_, it.oid);
    if (!st.ok()) {
      it.rc = st.status().code();
    } else {
      it.version = st->oi.version;
      it.size = st->size;
    }
    if (deep && it.rc == 0) {
      uint32_t crc = 0;
      auto d = object_digest(host_.store(), coll_, it.oid, &crc);
      if (d.ok()) it.digest = *d;
      else it.rc = d.status().code();
      // Data that no longer matches its own digest is a bad copy even when
      // no majority of replicas could tell (a backend that checksums has
      // failed the read already).
      if (d.ok() && st->oi.has_data_digest && crc != st->oi.data_digest) it.rc = -EBADMSG;
    }
    items.push_back(std::move(it));
  }
  return items;
}

void Pg::on_scan(const InMsgRef &in) {
  auto s = in->root<wire::PgScan>();
  bool more = false;
  std::vector<ScanItemT> items =
      scan_items(s.getStartAfter(), s.getEnd(), s.getLimit(), s.getDeep(), &more);
  in->conn->send(build_msg<wire::PgScanReply>(msg::kMsgPgScanReply, [&](wire::PgScanReply::Builder b) {
    b.setPool(pgid_.pool);
    b.setSeed(pgid_.seed);
    b.setIntervalEpoch(s.getIntervalEpoch());
    b.setTid(s.getTid());
    b.setFrom(host_.whoami());
    auto l = b.initItems(static_cast<unsigned>(items.size()));
    for (unsigned i = 0; i < items.size(); ++i) {
      l[i].setOid(items[i].oid);
      to_wire(items[i].version, l[i].initVersion());
      l[i].setSize(items[i].size);
      l[i].setDigest(items[i].digest);
      l[i].setRc(items[i].rc);
    }
    b.setMore(more);
  }));
}

void Pg::on_scan_reply(const InMsgRef &in) {
  auto r = in->root<wire::PgScanReply>();
  if (!is_primary() || r.getIntervalEpoch() != interval_start_) return;
  uint64_t tid = r.getTid();
  int32_t from = r.getFrom();
  std::vector<ScanItemT> items;
  for (auto i : r.getItems()) {
    ScanItemT it;
    it.oid = i.getOid();
    it.version = from_wire(i.getVersion());
    it.size = i.getSize();
    it.digest = i.getDigest();
    it.rc = i.getRc();
    items.push_back(std::move(it));
  }
  if (state_ == State::kScanSelf && tid == self_scan_.tid && from == plan_.auth) {
    for (ScanItemT &it : items) {
      self_scan_.cursor = it.oid;
      self_scan_.auth_items.emplace_back(std::move(it.oid), it.version);
    }
    if (r.getMore()) self_scan_step();
    else finish_self_scan();
    return;
  }
  if (scrub_ && scrub_tid_matches(tid)) {
    scrub_reply(from, std::move(items));
    return;
  }
  auto pit = peers_.find(from);
  if (pit == peers_.end() || pit->second.bf.scan_tid != tid) return;
  Backfill &bf = pit->second.bf;
  bf.scan_tid = 0;
  for (ScanItemT &it : items) {
    bf.remote_cursor = it.oid;
    bf.remote.emplace_back(std::move(it.oid), it.version);
  }
  bf.remote_more = r.getMore() && !items.empty();
  recover();
}

}  // namespace strata::osd
