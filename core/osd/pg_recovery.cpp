// Recovery on an active primary: pull what its own copy lacks, push what the
// replicas lack (log-based recovery), copy everything a backfill target
// lacks by walking both object listings in name order, then declare the PG
// clean. At most osd_recovery_max_active objects move at once per OSD;
// objects a client is waiting for jump the queue.
#include <algorithm>

#include "osd/encoding.h"
#include "osd/object_digest.h"
#include "osd/object_snaps.h"
#include "osd/op_exec.h"
#include "osd/pg.h"
#include "osd/pg_msgs.h"
#include "osd/pg_scrub.h"

namespace strata::osd {

namespace {
constexpr uint32_t kBackfillChunk = 64;
constexpr uint64_t kOmapPage = 1024;
}  // namespace

bool Pg::too_full_for_recovery(int32_t osd) const {
  return cluster::first_at_least(map_->map(), {osd}, cluster::Fullness::kBackfillfull) >= 0;
}

void Pg::recover() {
  if (!is_primary() || state_ != State::kActive) return;
  // 1. The primary's own copy first: everything else is pushed from it.
  for (const auto &[oid, item] : missing_) {
    if (recovering_.count(oid) || unfound_.count(oid)) continue;
    if (start_object_recovery(oid, false) == -1) return;  // throttle full
  }
  // 2. Replicas that lack objects the log names.
  for (auto &[osd, ps] : peers_) {
    if (ps.backfill) continue;
    const bool too_full = too_full_for_recovery(osd);
    for (const auto &[oid, item] : ps.missing) {
      if (missing_.count(oid) || recovering_.count(oid)) continue;
      if (too_full && !item.is_delete) continue;  // a delete frees space: always welcome
      if (start_object_recovery(oid, false) == -1) return;
    }
  }
  // 3. Backfill targets, once the primary's copy is whole.
  if (missing_.empty())
    for (auto &[osd, ps] : peers_)
      if (ps.backfill && !too_full_for_recovery(osd)) backfill_step(osd, ps);
  maybe_clean();
}

int Pg::start_object_recovery(const std::string &oid, bool priority) {
  if (recovering_.count(oid)) return 0;
  ObjectSlot &s = slot(oid);
  if (s.writes > 0) return 0;
  RecoveryThrottle &thr = host_.recovery_throttle();
  bool throttled = false;
  if (!priority) {
    if (!thr.try_acquire()) return -1;
    throttled = true;
  }
  Recovery rec;
  rec.tid = next_tid_++;
  rec.throttled = throttled;
  auto mit = missing_.find(oid);
  if (mit != missing_.end()) {
    if (mit->second.is_delete) {
      // Nothing to fetch: the object is gone in the authoritative log.
      store::Transaction t;
      t.remove(coll_, oid);
      t.omap_rm(coll_, kPgMetaObject, missing_key(oid));
      s.recovering = true;
      recovering_[oid] = rec;
      queue_local(std::move(t), [oid](Pg &p) {
        p.missing_.erase(oid);
        p.recovery_done(oid);
      });
      return 1;
    }
    int32_t src = pull_source(oid);
    if (src < 0) {
      if (throttled) thr.release();
      if (unfound_.insert(oid).second)
        host_.log().warn("osd", name_ + ": object '" + oid + "' (" + mit->second.need.str() +
                                    ") is unfound: no OSD that answered has it");
      release_slot_if_idle(oid);
      return -2;
    }
    rec.pull = true;
    rec.source = src;
    host_.log().debug("osd", name_ + ": pulling '" + oid + "' " + mit->second.need.str() + " from osd." +
                                 std::to_string(src));
    host_.send_to_osd(src, build_msg<wire::PgPull>(msg::kMsgPgPull, [&](wire::PgPull::Builder b) {
                        stamp(b);
                        b.setTid(rec.tid);
                        b.setFrom(host_.whoami());
                        b.setOid(oid);
                      }));
    s.recovering = true;
    recovering_[oid] = rec;
    return 1;
  }
  std::set<int32_t> targets;
  for (const auto &[osd, ps] : peers_)
    // A backfillfull peer gets only deletes and what a waiting client
    // write needs.
    if (auto it = ps.missing.find(oid); !ps.backfill && it != ps.missing.end() &&
                                        (priority || it->second.is_delete ||
                                         !too_full_for_recovery(osd)))
      targets.insert(osd);
  if (targets.empty()) {
    if (throttled) thr.release();
    release_slot_if_idle(oid);
    return 0;
  }
  s.recovering = true;
  send_push(oid, targets, rec);
  recovering_[oid] = std::move(rec);
  return 1;
}

int32_t Pg::pull_source(const std::string &oid) const {
  int32_t me = host_.whoami();
  std::vector<int32_t> order;
  if (plan_.auth >= 0 && plan_.auth != me) order.push_back(plan_.auth);
  for (int32_t o : acting_) order.push_back(o);
  for (const auto &[osd, r] : reports_) order.push_back(osd);
  for (int32_t c : order) {
    if (c == me) continue;
    auto pit = peers_.find(c);
    if (pit != peers_.end()) {
      // An acting replica holds what the authoritative log says, except
      // what it is missing (or has not been backfilled yet).
      if (!pit->second.backfill && !pit->second.missing.count(oid)) return c;
      continue;
    }
    auto rit = reports_.find(c);
    if (rit == reports_.end()) continue;
    const PeerReport &r = rit->second;
    if (!r.has_pg || !r.info.backfill_complete || r.missing.count(oid)) continue;
    if (r.info.last_update < plan_.last_update) continue;  // an older copy of the PG
    return c;
  }
  return -1;
}

namespace {

// Appends to `t` what makes `name` on another OSD what it is here: removed,
// then (when it exists here) re-created with its data, xattrs and omap.
Status append_object_copy(store::Store &st, const std::string &coll, const std::string &name,
                          int32_t whoami, store::Transaction &t, ObjectState *state_out) {
  auto state = load_object_state(st, coll, name);
  if (!state.ok()) return state.status();
  if (state_out) *state_out = *state;
  t.remove(coll, name);
  if (!state->exists) return Status::OK();
  t.touch(coll, name);
  auto data = st.read(coll, name);
  if (!data.ok()) return data.status().Context("reading " + name);
  // A copy that fails its digest is not a source (a backend that checksums
  // has failed the read above already).
  if (!(st.backend_caps() & STRATA_OS_CAP_DATA_CHECKSUMS))
    if (std::string why = data_digest_mismatch(state->oi, *data); !why.empty())
      return Status::Error(EIO, "'" + name + "' on osd." + std::to_string(whoami) + ": " + why);
  if (!data->empty()) t.write_full(coll, name, *data);
  auto attrs = st.getxattrs(coll, name);
  if (!attrs.ok()) return attrs.status();
  for (const auto &[k, v] : *attrs) t.setxattr(coll, name, k, v);
  auto header = st.omap_get_header(coll, name);
  if (!header.ok()) return header.status();
  if (!header->empty()) t.omap_set_header(coll, name, *header);
  std::string after;
  for (;;) {
    auto page = st.omap_list(coll, name, after, {}, kOmapPage);
    if (!page.ok()) return page.status();
    for (const auto &[k, v] : *page) t.omap_set(coll, name, k, v);
    if (page->size() < kOmapPage) break;
    after = page->back().first;
  }
  return Status::OK();
}

}  // namespace

Result<store::Transaction> Pg::build_push_txn(const std::string &oid, bool *exists,
                                              EVersion *version) {
  store::Store &st = host_.store();
  store::Transaction t;
  ObjectState state;
  if (Status s = append_object_copy(st, coll_, oid, host_.whoami(), t, &state); !s.ok()) return s;
  *exists = state.exists;
  *version = state.oi.version;
  // An object travels with its snapshot companions (object_snaps.h), which
  // outlive it: a removed object may still have clones to bring.
  if (!is_snap_companion(oid)) {
    auto ss = load_snapset(st, coll_, oid);
    if (!ss.ok()) return ss.status();
    for (const std::string &name : companion_objects(oid, *ss))
      if (Status s = append_object_copy(st, coll_, name, host_.whoami(), t, nullptr); !s.ok())
        return s;
  }
  return t;
}

store::Transaction Pg::without_stale_companions(const std::string &oid, store::Transaction t) {
  // The pushed copy names every companion the source has; those this copy
  // has beyond them (clones the source trimmed while this OSD was away)
  // go first.
  if (is_snap_companion(oid)) return t;
  auto ss = load_snapset(host_.store(), coll_, oid);
  std::vector<std::string> local = ss.ok() ? companion_objects(oid, *ss) : std::vector<std::string>{};
  if (local.empty()) return t;
  store::Transaction out;
  for (const std::string &name : local) out.remove(coll_, name);
  for (const strata_op &op : t.ops())
    out.add(op.type, {op.collection.data, op.collection.len}, {op.object.data, op.object.len},
            {op.key.data, op.key.len}, {op.value.data, op.value.len}, op.offset, op.length);
  return out;
}

void Pg::send_push(const std::string &oid, const std::set<int32_t> &targets, Recovery &rec) {
  bool exists = false;
  EVersion version;
  auto t = build_push_txn(oid, &exists, &version);
  int32_t rc = t.ok() ? 0 : t.status().code();
  if (!t.ok())
    host_.log().error("osd", name_ + ": cannot read '" + oid + "' to recover it: " +
                                 t.status().ToString());
  // A removed object's push still carries its companions when it has some.
  std::string enc = t.ok() && (exists || t->size() > 1) ? t->encode() : std::string();
  for (int32_t target : targets) {
    std::vector<std::string> segs;
    if (!enc.empty()) segs.push_back(enc);
    host_.send_to_osd(target, build_msg<wire::PgPush>(msg::kMsgPgPush, [&](wire::PgPush::Builder b) {
                        stamp(b);
                        b.setTid(rec.tid);
                        b.setFrom(host_.whoami());
                        b.setOid(oid);
                        to_wire(version, b.initVersion());
                        b.setIsDelete(t.ok() && !exists);
                        b.setTxnSeg(enc.empty() ? -1 : 0);
                        b.setRc(rc);
                      },
                      std::move(segs)));
  }
  rec.targets = targets;
}

void Pg::on_pull(const InMsgRef &in) {
  auto p = in->root<wire::PgPull>();
  std::string oid = p.getOid();
  int32_t rc = 0;
  bool exists = false;
  EVersion version;
  std::string enc;
  if (!local_ || !info_.backfill_complete) {
    rc = -ENOENT;
  } else if (missing_.count(oid)) {
    rc = -EAGAIN;  // this copy lacks it too
  } else {
    auto t = build_push_txn(oid, &exists, &version);
    if (!t.ok()) rc = t.status().code();
    else if (exists || t->size() > 1) enc = t->encode();
  }
  host_.log().debug("osd", name_ + ": osd." + std::to_string(p.getFrom()) + " pulls '" + oid + "': rc " +
                               std::to_string(rc) + (exists ? ", exists " : ", absent ") + version.str());
  // Decided before the call: build_msg's segment argument is moved before
  // the fill function runs.
  const int32_t seg = enc.empty() ? -1 : 0;
  std::vector<std::string> segs;
  if (!enc.empty()) segs.push_back(std::move(enc));
  in->conn->send(build_msg<wire::PgPush>(msg::kMsgPgPush, [&](wire::PgPush::Builder b) {
    b.setPool(pgid_.pool);
    b.setSeed(pgid_.seed);
    b.setMapEpoch(map_ ? map_->epoch() : 0);
    b.setIntervalEpoch(p.getIntervalEpoch());
    b.setTid(p.getTid());
    b.setFrom(host_.whoami());
    b.setOid(oid);
    to_wire(version, b.initVersion());
    b.setIsDelete(rc == 0 && !exists);
    b.setTxnSeg(seg);
    b.setRc(rc);
  }, std::move(segs)));
}

void Pg::on_push(const InMsgRef &in) {
  auto p = in->root<wire::PgPush>();
  std::string oid = p.getOid();
  host_.log().debug("osd", name_ + ": push of '" + oid + "' from osd." + std::to_string(p.getFrom()) +
                               " rc " + std::to_string(p.getRc()) + (p.getIsDelete() ? " delete" : "") +
                               " seg " + std::to_string(p.getTxnSeg()) + " tid " + std::to_string(p.getTid()));
  store::Transaction t;
  if (p.getTxnSeg() >= 0) {
    auto seg = msg::segment(in->m, p.getTxnSeg(), "PgPush");
    auto decoded = seg.ok() ? store::Transaction::decode(*seg) : Result<store::Transaction>(seg.status());
    if (!decoded.ok()) {
      in->conn->close(name_ + ": bad PgPush: " + decoded.status().message());
      return;
    }
    t = std::move(*decoded);
  } else if (p.getIsDelete()) {
    t.remove(coll_, oid);
  } else if (p.getRc() == 0) {
    // Neither a copy nor a delete: never apply it as either.
    in->conn->close(name_ + ": PgPush of '" + oid + "' without data");
    return;
  }
  if (p.getRc() == 0) t = without_stale_companions(oid, std::move(t));

  if (is_primary()) {
    // The answer to one of our pulls.
    if (p.getIntervalEpoch() != interval_start_) return;
    auto it = recovering_.find(oid);
    if (it == recovering_.end() || !it->second.pull || it->second.tid != p.getTid()) return;
    if (p.getRc() != 0) {
      host_.log().warn("osd", name_ + ": osd." + std::to_string(p.getFrom()) + " could not provide '" +
                                  oid + "': rc " + std::to_string(p.getRc()));
      // Try another source on the next pass; the failed one is skipped
      // by marking the object missing there.
      if (auto pit = peers_.find(p.getFrom()); pit != peers_.end())
        pit->second.missing[oid] = missing_[oid];
      else if (auto rit = reports_.find(p.getFrom()); rit != reports_.end())
        rit->second.missing[oid] = missing_[oid];
      read_repair_pull_failed(oid, p.getFrom(), p.getRc());
      recovery_done(oid);
      return;
    }
    t.omap_rm(coll_, kPgMetaObject, missing_key(oid));
    queue_local(std::move(t), [oid, from = p.getFrom()](Pg &pg) {
      pg.missing_.erase(oid);
      pg.read_repair_done(oid, from);
      pg.recovery_done(oid);
    });
    return;
  }

  // A replica receiving a copy from its primary.
  if (stale(in->map_epoch) || state_ != State::kReplica) return;
  t.omap_rm(coll_, kPgMetaObject, missing_key(oid));
  missing_.erase(oid);
  msg::Message reply = build_msg<wire::PgPushReply>(msg::kMsgPgPushReply, [&](wire::PgPushReply::Builder b) {
    b.setPool(pgid_.pool);
    b.setSeed(pgid_.seed);
    b.setIntervalEpoch(p.getIntervalEpoch());
    b.setTid(p.getTid());
    b.setFrom(host_.whoami());
    b.setOid(oid);
  });
  queue_then_reply(std::move(t), in->conn, std::move(reply), "recovery push",
                   store::Store::Ack::kApplied);
}

void Pg::on_push_reply(const InMsgRef &in) {
  auto r = in->root<wire::PgPushReply>();
  if (!is_primary() || r.getIntervalEpoch() != interval_start_) return;
  std::string oid = r.getOid();
  auto it = recovering_.find(oid);
  if (it == recovering_.end() || it->second.tid != r.getTid()) return;
  int32_t from = r.getFrom();
  Recovery &rec = it->second;
  auto pit = peers_.find(from);
  if (r.getRc() == 0 && pit != peers_.end()) pit->second.missing.erase(oid);
  rec.targets.erase(from);
  if (rec.backfill_targets.erase(from) && pit != peers_.end() && pit->second.bf.pushes > 0)
    pit->second.bf.pushes--;
  if (rec.targets.empty()) recovery_done(oid);
}

void Pg::recovery_done(const std::string &oid) {
  auto it = recovering_.find(oid);
  if (it != recovering_.end()) {
    if (it->second.throttled) host_.recovery_throttle().release();
    recovering_.erase(it);
  }
  if (auto sit = slots_.find(oid); sit != slots_.end()) sit->second.recovering = false;
  if (scrub_) scrub_repaired(oid);
  kick(oid);
  recover();
  publish();
}

void Pg::backfill_step(int32_t peer, PeerState &ps) {
  Backfill &bf = ps.bf;
  RecoveryThrottle &thr = host_.recovery_throttle();
  for (;;) {
    if (bf.local.empty() && bf.local_more) {
      bool more = false;
      std::string from = bf.local_cursor;
      for (std::string &n : list_range(bf.local_cursor, "", kBackfillChunk, &more)) {
        bf.local_cursor = n;
        bf.local.push_back(std::move(n));
      }
      bf.local_more = more;
      // Objects whose first write is still in the store's queue are not in
      // the listing yet; they belong in it.
      for (const auto &[tid, w] : in_flight_)
        if (w->oid > from && w->oid > bf.last_started && (!more || w->oid <= bf.local_cursor))
          note_backfill_write(bf, w->oid);
      if (!more && bf.local.empty()) bf.local_cursor = from;
    }
    if (bf.remote.empty() && bf.remote_more) {
      if (bf.scan_tid == 0) {
        bf.scan_tid = next_tid_++;
        host_.send_to_osd(peer, build_msg<wire::PgScan>(msg::kMsgPgScan, [&](wire::PgScan::Builder b) {
                            stamp(b);
                            b.setTid(bf.scan_tid);
                            b.setFrom(host_.whoami());
                            b.setStartAfter(bf.remote_cursor);
                            b.setLimit(kBackfillChunk);
                          }));
      }
      return;  // continues when the listing arrives
    }
    if (bf.local.empty() && bf.remote.empty()) {
      if (bf.pushes == 0) {
        host_.send_to_osd(peer, build_msg<wire::PgBackfillDone>(msg::kMsgPgBackfillDone, [&](auto b) {
                            stamp(b);
                            b.setFrom(host_.whoami());
                          }));
        ps.backfill = false;
        host_.log().info("osd", name_ + ": backfill of osd." + std::to_string(peer) + " done");
      }
      return;
    }
    bool take_local = !bf.local.empty() && (bf.remote.empty() || bf.local.front() <= bf.remote.front().first);
    const std::string k = take_local ? bf.local.front() : bf.remote.front().first;
    bool local_has = take_local;
    bool remote_has = !bf.remote.empty() && bf.remote.front().first == k;
    auto sit = slots_.find(k);
    if (sit != slots_.end() && sit->second.busy()) return;  // a write first; tried again after it
    if (local_has && remote_has) {
      auto st = load_object_state(host_.store(), coll_, k);
      if (st.ok() && st->exists && st->oi.version == bf.remote.front().second) {
        bf.local.pop_front();
        bf.remote.pop_front();
        bf.last_started = k;
        continue;  // the same version on both: nothing to copy
      }
    }
    if (!thr.try_acquire()) return;
    if (local_has) bf.local.pop_front();
    if (remote_has) bf.remote.pop_front();
    // From here on writes to k reach the target in full; the copy below
    // brings it to the current version first (the slot keeps them out).
    bf.last_started = k;
    Recovery rec;
    rec.tid = next_tid_++;
    rec.throttled = true;
    rec.backfill_targets.insert(peer);
    slot(k).recovering = true;
    send_push(k, {peer}, rec);
    recovering_[k] = std::move(rec);
    bf.pushes++;
  }
}

void Pg::on_backfill_done(const InMsgRef &in) {
  if (stale(in->map_epoch) || state_ != State::kReplica) return;
  info_.backfill_complete = true;
  store::Transaction t;
  persist_info(t);
  queue_local(std::move(t));
}

void Pg::maybe_clean() {
  if (clean_ || !is_clean()) return;
  clean_ = true;
  host_.log().info("osd", name_ + " is active+clean");
  for (int32_t s : strays_) {
    host_.send_to_osd(s, build_msg<wire::PgRemove>(msg::kMsgPgRemove, [&](wire::PgRemove::Builder b) {
                        b.setPool(pgid_.pool);
                        b.setSeed(pgid_.seed);
                        b.setMapEpoch(map_->epoch());
                        b.setFrom(host_.whoami());
                      }));
  }
  strays_.clear();
  publish();
}

}  // namespace strata::osd
