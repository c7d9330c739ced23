// Client ops on the primary and their replication: per-object ordering,
// reads, writes as one store transaction sent to every acting replica in
// parallel, acknowledgement when every copy is durable, exactly-once
// answers for resent writes, object listing.
#include <algorithm>

#include "osd/encoding.h"
#include "osd/object_snaps.h"
#include "osd/op_exec.h"
#include "osd/pg.h"
#include "osd/pg_msgs.h"
#include "osd/pg_scrub.h"

namespace strata::osd {

namespace {
constexpr uint32_t kDefaultListLimit = 1000;
constexpr uint32_t kMaxListLimit = 10000;
}  // namespace

void Pg::on_client_op(const ClientOpRef &op) { do_op(op); }

void Pg::reply_retry(const ClientOpRef &op) {
  host_.log().debug("osd", name_ + ": op " + op->reqid.client + ":" + std::to_string(op->tid) + " retry");
  send_reply(op->conn, build_retry_reply(op->tid, map_ ? map_->epoch() : 0));
}

void Pg::send_reply(const msg::ConnectionRef &conn, msg::Message m) {
  if (conn) conn->send(std::move(m));
}

bool Pg::degraded(const std::string &oid) const {
  if (missing_.count(oid)) return true;
  for (const auto &[osd, ps] : peers_)
    if (ps.missing.count(oid)) return true;
  return false;
}

void Pg::do_op(const ClientOpRef &op) { do_op(op, false); }

void Pg::do_op(const ClientOpRef &op, bool from_slot) {
  if (!is_primary()) {
    reply_retry(op);
    return;
  }
  if (state_ != State::kActive) {
    waiting_active_.push_back([this, op] { do_op(op); });
    return;
  }
  const bool write = op->is_write;
  if (write) {
    const cluster::PoolInfo *p = pool();
    if (!p || acting_.size() < p->min_size) {
      // Fewer copies than min_size: the write waits for the map to change
      // rather than risk being acknowledged on too few disks.
      waiting_min_size_.push_back([this, op] { do_op(op); });
      return;
    }
    if (scrub_blocks(op->oid)) {
      scrub_->waiters.push_back([this, op] { do_op(op); });
      return;
    }
  }
  ObjectSlot &s = slot(op->oid);
  // Writes that read nothing of the object (plain writes, full writes,
  // truncates, xattr and omap sets: what block images send) do not wait
  // for the previous write to it to settle on every replica: they are
  // ordered after it in the PG log, in the local store's queue and on
  // each replica's connection, so every copy applies them in the same
  // order. Anything else -- a read, a guard, an append, a recovery, or an
  // op queued behind one of those -- still waits its turn.
  const bool pipelined = write && !from_slot && s.writes > 0 && !s.recovering &&
                         s.waiters.empty() && !ops_need_object_state(op->ops);
  if ((s.busy() && !pipelined) || (!from_slot && !s.waiters.empty())) {
    s.waiters.push_back([this, op] { do_op(op, true); });
    return;
  }
  // A write (or a resent write answered from the log) must reach every
  // copy: an object some replica lacks is recovered first. Reads only need
  // the primary's own copy.
  if (write ? degraded(op->oid) : missing_.count(op->oid) != 0) {
    s.waiters.push_back([this, op] { do_op(op, true); });
    start_object_recovery(op->oid, true);
    return;
  }
  if (op->conn && !op->conn->is_open()) {
    // Its connection closed while it waited (the client's key was revoked,
    // or the link broke): serve nothing to it. A live client resends on its
    // next connection and is answered from the log if this was applied.
    host_.log().debug("osd", name_ + ": op " + op->reqid.client + ":" + std::to_string(op->tid) +
                                 " dropped: its connection closed");
  } else if (write) {
    do_write(op);
  } else {
    do_read(op);
  }
  release_slot_if_idle(op->oid);
}

void Pg::do_read(const ClientOpRef &op) {
  ExecOutcome out = execute_ops(host_.store(), coll_, op->oid, op->ops, ObjectInfo{}, nullptr);
  std::string why;
  if (out.rc == -EIO) {
    why = "EIO from the store";
  } else if (out.rc == 0 && !(host_.store().backend_caps() & STRATA_OS_CAP_DATA_CHECKSUMS)) {
    why = check_data_digest(op->ops, out);
    if (!why.empty()) out.rc = -EIO;
  }
  if (out.rc == -EIO) {
    // Never bytes that failed their check, never EIO while a replica has
    // a good copy: repair this copy from it, then serve the read again.
    // (A snapshot read went to a clone, which read repair does not fetch
    // yet: it gets the EIO; scrub repairs clones.)
    const bool at_snap = !op->ops.empty() && op->ops.front().code == OpCode::kSetSnap;
    if (!at_snap && start_read_repair(op, why)) return;
    std::string context = name_ + " primary osd." + std::to_string(host_.whoami()) + ": " + why;
    if (auto d = damaged_.find(op->oid); d != damaged_.end()) context += "; " + d->second;
    else context += "; no replica could provide a good copy";
    host_.log().error("osd", "read of '" + op->oid + "' answered EIO: " + context);
    out.results.clear();  // not one byte of what failed
    send_reply(op->conn, build_op_reply(op->tid, out.rc, out.version, {}, false, context));
    return;
  }
  send_op_reply(op->conn, op->tid,
                build_op_reply(op->tid, out.rc, out.version, std::move(out.results)),
                [&] { return name_ + " read of '" + op->oid + "'"; });
}

void Pg::do_write(const ClientOpRef &op) {
  if (const LogEntry *e = log_.find(op->reqid)) {
    // Resent after a lost reply or a primary change: applied once already.
    host_.log().debug("osd", name_ + ": op " + op->reqid.client + ":" + std::to_string(op->tid) +
                                 " replayed from the log (" + e->version.str() + ")");
    std::vector<OpResult> results(op->ops.size());
    send_reply(op->conn, build_op_reply(op->tid, e->rc, e->version.version, std::move(results), true));
    return;
  }
  if (std::string why = space_refusal(*op); !why.empty()) {
    host_.log().debug("osd", name_ + ": op " + op->reqid.client + ":" + std::to_string(op->tid) +
                                 " on '" + op->oid + "' refused: " + why);
    // No step ran: the caller sees ENOSPC on the first step of the op.
    send_reply(op->conn, build_op_reply(op->tid, -ENOSPC, 0, {}));
    return;
  }
  EVersion v{map_->epoch(), log_.head().version + 1};
  ObjectInfo noi{v, now_ns()};
  store::Transaction t;
  ExecOutcome out = execute_ops(host_.store(), coll_, op->oid, op->ops, noi, &t);
  if (out.rc < 0 || !out.mutated) {
    send_op_reply(op->conn, op->tid,
                  build_op_reply(op->tid, out.rc, out.version, std::move(out.results)),
                  [&] { return name_ + " op on '" + op->oid + "'"; });
    return;
  }
  LogEntry e{v, op->oid, out.log_op, op->reqid, 0, noi.mtime_ns};

  std::vector<int32_t> others;
  for (int32_t o : acting_)
    if (o != host_.whoami()) others.push_back(o);
  auto w = std::make_shared<RepWrite>(std::move(others));
  w->pgid = pgid_;
  w->generation = generation_;
  w->rep_tid = host_.new_rep_tid();
  w->op = op;
  w->oid = op->oid;
  w->conn = op->conn;
  w->client_tid = op->tid;
  w->reply = build_op_reply(op->tid, 0, v.version, std::move(out.results));

  const std::vector<int32_t> &replicas = w->acks.replicas();
  host_.track_write(w);

  // The replicas get the object ops (encoded once) and log the entry
  // themselves; they are sent before the local queue so that the network
  // and the local journal write overlap.
  if (!replicas.empty()) {
    std::string enc = t.encode();
    for (size_t i = 0; i < replicas.size(); ++i) {
      int32_t r = replicas[i];
      PeerState &ps = peers_[r];
      bool full = !ps.backfill || op->oid <= ps.bf.last_started;
      if (!full) note_backfill_write(ps.bf, op->oid);
      std::vector<std::string> segs;
      if (full) segs.push_back(i + 1 == replicas.size() ? std::move(enc) : enc);
      host_.send_to_osd(r, build_msg<wire::RepOp>(
                               msg::kMsgRepOp,
                               [&](wire::RepOp::Builder b) {
                                 stamp(b);
                                 b.setRepTid(w->rep_tid);
                                 to_wire(e, b.initEntry());
                                 b.setTxnSeg(full ? 0 : -1);
                               },
                               std::move(segs)));
    }
  }

  // The data went to the replicas above; locally the transaction names the
  // stage the StagePool wrote on arrival instead of carrying the bytes.
  const bool staged = op->staged && op->staged->bind(t);
  // A damaged object replaced or removed as a whole is damaged no more
  // (locally only: the finding lives in the primary's PG meta object).
  if (damaged_.count(op->oid) &&
      std::any_of(op->ops.begin(), op->ops.end(),
                  [](const OsdOp &o) { return o.code == OpCode::kWriteFull || o.code == OpCode::kRemove; }))
    clear_damaged(t, op->oid);
  log_.append(e, t);
  info_.last_update = v;
  maybe_trim_log(t);
  in_flight_[w->rep_tid] = w;
  slot(op->oid).writes++;

  ++local_pending_;
  PgHost *host = &host_;
  PgId pg = pgid_;
  uint64_t gen = generation_;
  uint64_t tid = w->rep_tid;
  Status st = host_.store().queue(std::move(t), [w, host, pg, gen, tid](const Status &s) {
    if (!s.ok()) {
      host->fatal(s.Context("pg " + pg_str(pg) + " write"));
      return;
    }
    // The client hears back from whichever thread completes the last copy.
    if (w->acks.local() == CopyAcks::Ack::kLast) send_write_reply(*host, *w);
    host->post_to_pg(pg, gen, [tid](Pg &p) {
      p.local_done();
      p.write_settled(tid);
    });
  }, store::Store::Ack::kDurable);  // journaled is durable; reads wait for the apply
  if (!st.ok()) host_.fatal(st.Context(name_ + " write"));
  else if (staged) op->staged->mark_queued();
}

std::string Pg::space_refusal(const ClientOp &op) const {
  if (!may_use_space(op.ops)) return {};
  if (op.stage_rc == -ENOSPC) return "staging its data would eat into this OSD's reserve";
  if (int32_t full = op.full_try
                         ? -1
                         : cluster::first_at_least(map_->map(), acting_, cluster::Fullness::kFull);
      full >= 0)
    return "osd." + std::to_string(full) + " is full";
  // The map's flag lags the disks by a beacon and an epoch: a burst of
  // data writes would otherwise eat the share kept for full_try writes.
  if (!op.full_try) {
    uint64_t incoming = 0;
    for (const OsdOp &o : op.ops)
      if (o.code == OpCode::kWrite || o.code == OpCode::kWriteFull || o.code == OpCode::kAppend)
        incoming += std::max<uint64_t>(o.data.size(), o.length);
    if (host_.disk_full(incoming))
      return "this OSD's disk is past osd_full_ratio " + std::to_string(host_.config().full_ratio);
    for (int32_t o : acting_)
      if (o != host_.whoami() && host_.peer_disk_full(o))
        return "osd." + std::to_string(o) + " said its disk is past the full ratio";
  }
  if (host_.failsafe_full())
    return "this OSD's disk is past osd_failsafe_full_ratio " +
           std::to_string(host_.config().failsafe_full_ratio);
  for (int32_t o : acting_)
    if (o != host_.whoami() && host_.peer_failsafe_full(o))
      return "osd." + std::to_string(o) + " said its disk is past its failsafe ratio";
  return {};
}

// A write the backfill target only logs: if the object falls in the part
// of the primary's listing already taken but not yet copied, add it there,
// or the copy would miss an object created after the listing.
void Pg::note_backfill_write(Backfill &bf, const std::string &oid) {
  // Beyond what was listed: the next listing sees it (backfill_step adds
  // the objects of writes still in flight then).
  if (bf.local_more && oid > bf.local_cursor) return;
  auto it = std::lower_bound(bf.local.begin(), bf.local.end(), oid);
  if (it == bf.local.end() || *it != oid) bf.local.insert(it, oid);
}

void Pg::write_settled(uint64_t rep_tid) {
  auto it = in_flight_.find(rep_tid);
  if (it == in_flight_.end() || !it->second->acks.complete()) return;
  std::string oid = it->second->oid;
  in_flight_.erase(it);
  host_.untrack_write(rep_tid);
  auto sit = slots_.find(oid);
  if (sit != slots_.end() && sit->second.writes > 0) sit->second.writes--;
  kick(oid);
  if (scrub_) scrub_step();          // a scrub chunk may wait for writes to drain
  if (any_backfill()) recover();     // a backfill may wait for this object
}

void Pg::maybe_trim_log(store::Transaction &t) {
  size_t keep = static_cast<size_t>(host_.config().pg_log_entries);
  // Trim in batches: one range delete now and then instead of one per write.
  if (log_.size() <= keep + std::max<size_t>(keep / 10, 10)) return;
  if (log_.trim(keep, t)) persist_info(t);
}

// --- replica side ------------------------------------------------------------

void Pg::on_rep_op(const InMsgRef &in) {
  if (stale(in->map_epoch)) return;
  if (state_ != State::kReplica) {
    host_.log().debug("osd", name_ + ": RepOp before activation, dropped");
    return;
  }
  auto r = in->root<wire::RepOp>();
  LogEntry e = from_wire(r.getEntry());
  store::Transaction t;
  if (!in->txn_error.empty()) {
    in->conn->close(name_ + ": RepOp transaction: " + in->txn_error);
    return;
  }
  if (in->txn) {
    t = std::move(*in->txn);  // decoded, large writes staged, on arrival
  } else if (r.getTxnSeg() >= 0) {
    auto seg = msg::segment(in->m, r.getTxnSeg(), "RepOp");
    if (!seg.ok()) {
      in->conn->close(name_ + ": " + seg.status().message());
      return;
    }
    // The segment is this message's last use of those bytes: the
    // transaction keeps them rather than copying a large write again.
    auto decoded = store::Transaction::decode_adopting(
        std::move(in->m.segments[static_cast<size_t>(r.getTxnSeg())]));
    if (!decoded.ok()) {
      in->conn->close(name_ + ": RepOp transaction: " + decoded.status().message());
      return;
    }
    t = std::move(*decoded);
  }
  if (e.version <= log_.head()) {
    host_.log().warn("osd", name_ + ": RepOp " + e.version.str() + " not after log head " +
                                log_.head().str() + ", dropped");
    return;
  }
  log_.append(e, t);
  info_.last_update = e.version;
  maybe_trim_log(t);
  msg::Message reply = build_msg<wire::RepOpReply>(msg::kMsgRepOpReply, [&](wire::RepOpReply::Builder b) {
    b.setPool(pgid_.pool);
    b.setSeed(pgid_.seed);
    b.setIntervalEpoch(r.getIntervalEpoch());
    b.setRepTid(r.getRepTid());
    b.setFrom(host_.whoami());
    b.setFailsafeFull(host_.failsafe_full());
    b.setFull(host_.disk_full());
  });
  queue_then_reply(std::move(t), in->conn, std::move(reply), "replicated write",
                   store::Store::Ack::kDurable);
  for (const store::StagedWriteRef &s : in->staged) s->mark_queued();
}

// --- listing --------------------------------------------------------------------

void Pg::on_pg_list(const InMsgRef &in) { do_pg_list(in); }

void Pg::do_pg_list(const InMsgRef &in) {
  auto r = in->root<wire::PgListRequest>();
  uint64_t tid = r.getTid();
  if (!is_primary()) {
    send_reply(in->conn, build_msg<wire::PgListReply>(msg::kMsgPgListReply, [&](auto b) {
                 b.setTid(tid);
                 b.setRetryEpoch(map_ ? map_->epoch() : 0);
               }));
    return;
  }
  if (state_ != State::kActive) {
    waiting_active_.push_back([this, in] { do_pg_list(in); });
    return;
  }
  std::string start_after = r.getStartAfter();
  uint32_t limit = r.getLimit() ? std::min(r.getLimit(), kMaxListLimit) : kDefaultListLimit;
  // Two extra: the pg-meta object, and one to tell whether there is more.
  // Snapshot companions (hidden) are skipped; pages full of them are read
  // past, so that a page never comes back empty with "more".
  int32_t rc = 0;
  std::vector<std::string> out;
  bool more = false;
  std::vector<std::string> names;
  bool store_more = false;
  for (std::string after = start_after;;) {
    auto page = host_.store().list_objects(coll_, after, limit + 2);
    if (!page.ok()) {
      if (page.status().code() != -ENOENT) rc = page.status().code();
      break;
    }
    store_more = page->size() == limit + 2;
    if (!page->empty()) after = page->back();
    size_t visible = 0;
    for (std::string &n : *page) {
      if (is_snap_companion(n)) continue;
      names.push_back(std::move(n));
      ++visible;
    }
    if (!store_more || visible > 1) break;
  }
  if (rc == 0) {
    std::string bound = store_more && !names.empty() ? names.back() : std::string();
    store_more = store_more && !names.empty();
    std::set<std::string> merged;
    for (std::string &n : names)
      if (n != kPgMetaObject) merged.insert(std::move(n));
    // Objects this primary still has to recover count as present (or gone).
    for (const auto &[oid, item] : missing_) {
      if (is_snap_companion(oid)) continue;
      if (oid <= start_after || (store_more && oid > bound)) continue;
      if (item.is_delete) merged.erase(oid);
      else merged.insert(oid);
    }
    for (const std::string &n : merged) {
      if (out.size() == limit) {
        more = true;
        break;
      }
      out.push_back(n);
    }
    more = more || store_more;
  }
  send_reply(in->conn, build_msg<wire::PgListReply>(msg::kMsgPgListReply, [&](auto b) {
               b.setTid(tid);
               b.setRc(rc);
               auto l = b.initNames(static_cast<unsigned>(out.size()));
               for (unsigned i = 0; i < out.size(); ++i) l.set(i, out[i]);
               b.setMore(more);
             }));
}

}  // namespace strata::osd
