// Messages in: from the messenger's I/O threads to the shard that owns the
// addressed PG (client ops, PG commands, peer messages), to the control
// thread (maps, keys), or answered on the spot (heartbeats).
#include <kj/exception.h>

#include <algorithm>

#include "msg/message_types.h"
#include "osd/osd_daemon.h"
#include "osd/pg_msgs.h"

namespace strata::osd {

namespace {

const char *type_name(uint16_t t) {
  switch (t) {
    case msg::kMsgPgListRequest: return "PgListRequest";
    case msg::kMsgPgCommand: return "PgCommand";
    case msg::kMsgRepOp: return "RepOp";
    case msg::kMsgRepOpReply: return "RepOpReply";
    case msg::kMsgPgQuery: return "PgQuery";
    case msg::kMsgPgNotify: return "PgNotify";
    case msg::kMsgPgActivate: return "PgActivate";
    case msg::kMsgPgPush: return "PgPush";
    case msg::kMsgPgPushReply: return "PgPushReply";
    case msg::kMsgPgPull: return "PgPull";
    case msg::kMsgPgScan: return "PgScan";
    case msg::kMsgPgScanReply: return "PgScanReply";
    case msg::kMsgPgBackfillDone: return "PgBackfillDone";
    case msg::kMsgPgRemove: return "PgRemove";
    default: return "message";
  }
}

// Reads the PG and (for requests) the sender's map epoch of a message.
template <class T>
void peek(InMsg &in) {
  auto r = in.root<T>();
  in.pgid = PgId{r.getPool(), r.getSeed()};
  if constexpr (requires { r.getMapEpoch(); }) in.map_epoch = r.getMapEpoch();
}

bool peek_any(InMsg &in) {
  switch (in.m.type) {
    case msg::kMsgPgListRequest: peek<wire::PgListRequest>(in); return true;
    case msg::kMsgPgCommand: peek<wire::PgCommand>(in); return true;
    case msg::kMsgRepOp: peek<wire::RepOp>(in); return true;
    case msg::kMsgRepOpReply: peek<wire::RepOpReply>(in); return true;
    case msg::kMsgPgQuery: peek<wire::PgQuery>(in); return true;
    case msg::kMsgPgNotify: peek<wire::PgNotify>(in); in.map_epoch = 0; return true;
    case msg::kMsgPgActivate: peek<wire::PgActivate>(in); return true;
    case msg::kMsgPgPush: peek<wire::PgPush>(in); return true;
    case msg::kMsgPgPushReply: peek<wire::PgPushReply>(in); return true;
    case msg::kMsgPgPull: peek<wire::PgPull>(in); return true;
    case msg::kMsgPgScan: peek<wire::PgScan>(in); return true;
    case msg::kMsgPgScanReply: peek<wire::PgScanReply>(in); return true;
    case msg::kMsgPgBackfillDone: peek<wire::PgBackfillDone>(in); return true;
    case msg::kMsgPgRemove: peek<wire::PgRemove>(in); return true;
    default: return false;
  }
}

bool from_client_allowed(uint16_t t) {
  return t == msg::kMsgOpRequest || t == msg::kMsgPgListRequest || t == msg::kMsgPgCommand;
}

}  // namespace

std::optional<std::string> OsdDaemon::secret_of(const std::string &entity) {
  {
    std::lock_guard lk(auth_mu_);
    auto it = auth_keys_.find(entity);
    if (it != auth_keys_.end()) return it->second;
  }
  return keyring_.secret(entity);
}

void OsdDaemon::on_close(const msg::ConnectionRef &conn, const std::string &) {
  if (links_ && links_->on_close(conn)) return;
  if (mon_) mon_->on_close(conn);
}

void OsdDaemon::on_message(const msg::ConnectionRef &conn, msg::Message &&m) {
  const uint16_t type = m.type;
  const std::string &peer = conn->peer_entity();
  bool peer_is_osd = peer.rfind("osd.", 0) == 0;
  switch (type) {
    case msg::kMsgMapUpdate:
    case msg::kMsgAuthUpdate: {
      if (!mon_ || !mon_->is_mon(conn)) return;
      mon_->on_rx(conn);
      auto held = std::make_shared<msg::Message>(std::move(m));
      control_.post([this, held] {
        if (held->type == msg::kMsgMapUpdate) handle_map_update(*held);
        else handle_auth_update(*held);
      });
      return;
    }
    case msg::kMsgMonCommandReply:  // the answer to a keepalive ping
      if (mon_) mon_->on_rx(conn);
      return;
    case msg::kMsgHeartbeat:
      if (peer_is_osd) on_heartbeat(conn, m);
      return;
    case msg::kMsgRepOpReply:
      if (peer_is_osd) on_rep_op_reply(conn, m);
      return;
    case msg::kMsgOpRequest: {
      auto op = decode_op_request(std::move(m), conn);
      if (!op.ok()) {
        conn->close("bad OpRequest: " + op.status().message());
        return;
      }
      ClientOpRef ref = *op;
      OsdShard *s = &shard_for(ref->pgid);
      auto deliver = [this, s, ref] { s->run_or_post([this, s, ref] { dispatch_client_op(*s, ref); }); };
      if (const OsdOp *big = large_write_full(*ref))
        stage_then_deliver(conn, [this, ref, big] { stage_client_write(*ref, *big); },
                           std::move(deliver));
      else
        order_.deliver(conn.get(), std::move(deliver));
      return;
    }
    default:
      break;
  }
  if (!from_client_allowed(type) && !peer_is_osd) {
    conn->close(std::string(type_name(type)) + " from " + peer + ", which is not an OSD");
    return;
  }
  auto in = std::make_shared<InMsg>();
  in->conn = conn;
  auto reader = msg::PayloadReader::open(m.payload);
  if (!reader.ok()) {
    conn->close(std::string(type_name(type)) + ": " + reader.status().message());
    return;
  }
  in->reader.emplace(std::move(*reader));
  in->m = std::move(m);
  try {
    if (!peek_any(*in)) {
      log_.debug("osd", "ignoring message type " + std::to_string(type) + " from " + peer);
      return;
    }
  } catch (const kj::Exception &e) {
    conn->close(std::string("malformed ") + type_name(type) + ": " + e.getDescription().cStr());
    return;
  }
  OsdShard *s = &shard_for(in->pgid);
  auto deliver = [this, s, in] { s->run_or_post([this, s, in] { dispatch_pg_msg(*s, in); }); };
  if (type == msg::kMsgRepOp && rep_op_needs_staging(*in))
    stage_then_deliver(conn, [this, in] { stage_rep_op(*in); }, std::move(deliver));
  else
    order_.deliver(conn.get(), std::move(deliver));
}

// --- staging large writes as they arrive ------------------------------------

void OsdDaemon::stage_then_deliver(const msg::ConnectionRef &conn, std::function<void()> stage,
                                   std::function<void()> deliver) {
  // The closures hold the message, which holds the connection: its address
  // stays a valid key until the place is filled.
  uint64_t slot = order_.reserve(conn.get());
  stage_pool_->post([this, key = conn.get(), slot, stage = std::move(stage),
                     deliver = std::move(deliver)]() mutable {
    stage();
    order_.fill(key, slot, std::move(deliver));
  });
}

const OsdOp *OsdDaemon::large_write_full(const ClientOp &op) const {
  if (!op.is_write) return nullptr;
  const OsdOp *found = nullptr;
  for (const OsdOp &o : op.ops) {
    if (o.code != OpCode::kWriteFull) continue;
    if (found) return nullptr;  // two full writes in one op: left to the store
    found = &o;
  }
  return found && store_->would_stage(found->data.size()) ? found : nullptr;
}

void OsdDaemon::stage_client_write(ClientOp &op, const OsdOp &write) {
  auto staged = store_->stage(write.data);
  if (staged.ok()) {
    op.staged = std::move(*staged);
    return;
  }
  op.stage_rc = staged.status().code();
  if (op.stage_rc == -ENOSPC) return;  // the PG refuses the op (Pg::space_refusal)
  // The op still goes ahead: the store journals (or stages) it when queued.
  log_.warn("osd", "staging " + std::to_string(write.data.size()) + " bytes for '" + op.oid +
                       "' on arrival: " + staged.status().ToString());
}

bool OsdDaemon::rep_op_needs_staging(InMsg &in) const {
  int32_t seg = in.root<wire::RepOp>().getTxnSeg();
  return seg >= 0 && static_cast<size_t>(seg) < in.m.segments.size() &&
         store_->would_stage(in.m.segments[static_cast<size_t>(seg)].size());
}

void OsdDaemon::stage_rep_op(InMsg &in) {
  size_t seg = static_cast<size_t>(in.root<wire::RepOp>().getTxnSeg());
  auto decoded = store::Transaction::decode_adopting(std::move(in.m.segments[seg]));
  if (!decoded.ok()) {
    in.txn_error = decoded.status().message();
    return;
  }
  std::vector<store::StagedWriteRef> staged;
  for (const strata_op &op : decoded->ops()) {
    if (op.type != STRATA_OP_WRITE_FULL || !store_->would_stage(op.value.len)) continue;
    auto s = store_->stage(std::string_view(static_cast<const char *>(op.value.data), op.value.len));
    if (!s.ok()) {
      log_.warn("osd", "staging a replicated write of " + std::to_string(op.value.len) +
                           " bytes on arrival: " + s.status().ToString());
      continue;
    }
    staged.push_back(std::move(*s));
  }
  for (const store::StagedWriteRef &s : staged) s->bind(*decoded);
  in.staged = std::move(staged);
  in.txn = std::move(*decoded);
}

void OsdDaemon::on_heartbeat(const msg::ConnectionRef &conn, const msg::Message &m) {
  int32_t from = -1;
  uint64_t stamp = 0, epoch = 0;
  bool is_reply = false, peer_full = false, peer_failsafe = false;
  Status st = msg::read_message<wire::Heartbeat>(m, "Heartbeat", [&](wire::Heartbeat::Reader r) {
    from = r.getFrom();
    peer_full = r.getFull();
    peer_failsafe = r.getFailsafeFull();
    stamp = r.getStampNs();
    epoch = r.getEpoch();
    is_reply = r.getIsReply();
    return Status::OK();
  });
  if (!st.ok()) {
    conn->close(st.message());
    return;
  }
  peer_fullness_.note(from, peer_full, peer_failsafe);
  if (is_reply) {
    heartbeats_.on_reply(from, HeartbeatTracker::Clock::now());
    return;
  }
  MapRef cur = current_map();
  conn->send(build_msg<wire::Heartbeat>(msg::kMsgHeartbeat, [&](wire::Heartbeat::Builder b) {
    b.setFrom(cfg_.id);
    b.setEpoch(cur ? cur->epoch() : 0);
    b.setStampNs(stamp);
    b.setIsReply(true);
    b.setFailsafeFull(failsafe_full());
    b.setFull(disk_full());
  }));
}

// A replica's ack, counted right here on the messenger thread: when it is
// the last copy the client is answered at once; the PG's shard only hears
// of it afterwards, to release the object.
void OsdDaemon::on_rep_op_reply(const msg::ConnectionRef &conn, const msg::Message &m) {
  uint64_t tid = 0;
  int32_t from = -1, rc = 0;
  Status st = msg::read_message<wire::RepOpReply>(m, "RepOpReply", [&](wire::RepOpReply::Reader r) {
    tid = r.getRepTid();
    from = r.getFrom();
    rc = r.getRc();
    peer_fullness_.note(from, r.getFull(), r.getFailsafeFull());
    return Status::OK();
  });
  if (!st.ok()) {
    conn->close(st.message());
    return;
  }
  WriteRef w = writes_.find(tid);
  if (!w) return;  // settled or abandoned
  switch (w->acks.replica(from, rc)) {
    case CopyAcks::Ack::kFailed:
      // The replica could not persist it: it stops itself, the map changes
      // and peering settles the write.
      log_.error("osd", "pg " + pg_str(w->pgid) + ": osd." + std::to_string(from) +
                            " failed a replicated write: rc " + std::to_string(rc));
      return;
    case CopyAcks::Ack::kLast:
      send_write_reply(*this, *w);
      // On this messenger thread if the shard is idle (see run_or_post).
      shard_for(w->pgid).run_or_post(
          for_pg(w->pgid, w->generation, [tid](Pg &p) { p.write_settled(tid); }));
      return;
    case CopyAcks::Ack::kCounted:
    case CopyAcks::Ack::kDuplicate:
    case CopyAcks::Ack::kUnknownReplica:
      return;
  }
}

void OsdDaemon::dispatch_client_op(OsdShard &shard, const ClientOpRef &op) {
  uint64_t epoch = shard.map ? shard.map->epoch() : 0;
  if (log_.level() <= STRATA_LOG_DEBUG)
    log_.debug("osd", "op " + op->reqid.client + ":" + std::to_string(op->tid) + " pg " +
                          pg_str(op->pgid) + " '" + op->oid + "' epoch " + std::to_string(op->map_epoch) +
                          " (mine " + std::to_string(epoch) + ")");
  if (op->map_epoch > epoch || !shard.map) {
    // The client has seen a newer map: wait for it.
    shard.waiting_for_map.emplace_back(op->map_epoch, [this, s = &shard, op] { dispatch_client_op(*s, op); });
    return;
  }
  const cluster::PoolInfo *pool = shard.map->map().pool(op->pgid.pool);
  if (!pool) {
    op->conn->send(build_op_reply(op->tid, -ENOENT, 0, {}));
    return;
  }
  Pg *pg = shard.pg(op->pgid);
  if (shard.map->pg_of(op->pgid.pool, op->oid).seed != op->pgid.seed || !pg || !pg->is_primary()) {
    op->conn->send(build_retry_reply(op->tid, epoch));
    return;
  }
  pg->on_client_op(op);
}

void OsdDaemon::dispatch_pg_msg(OsdShard &shard, const InMsgRef &in) {
  uint64_t epoch = shard.map ? shard.map->epoch() : 0;
  if (in->map_epoch > epoch) {
    shard.waiting_for_map.emplace_back(in->map_epoch, [this, s = &shard, in] { dispatch_pg_msg(*s, in); });
    return;
  }
  Pg *pg = shard.pg(in->pgid);
  try {
    if (!pg) {
      answer_without_pg(in);
      return;
    }
    switch (in->m.type) {
      case msg::kMsgPgListRequest: pg->on_pg_list(in); break;
      case msg::kMsgPgCommand: pg->on_pg_command(in); break;
      case msg::kMsgRepOp: pg->on_rep_op(in); break;
      case msg::kMsgPgQuery: pg->on_query(in); break;
      case msg::kMsgPgNotify: pg->on_notify(in); break;
      case msg::kMsgPgActivate: pg->on_activate(in); break;
      case msg::kMsgPgPush: pg->on_push(in); break;
      case msg::kMsgPgPushReply: pg->on_push_reply(in); break;
      case msg::kMsgPgPull: pg->on_pull(in); break;
      case msg::kMsgPgScan: pg->on_scan(in); break;
      case msg::kMsgPgScanReply: pg->on_scan_reply(in); break;
      case msg::kMsgPgBackfillDone: pg->on_backfill_done(in); break;
      case msg::kMsgPgRemove: pg->on_remove(in); break;
      default: break;
    }
  } catch (const kj::Exception &e) {
    in->conn->close(std::string("malformed ") + type_name(in->m.type) + " for pg " + pg_str(in->pgid) +
                    ": " + e.getDescription().cStr());
  }
}

// Requests for a PG this OSD holds nothing of.
void OsdDaemon::answer_without_pg(const InMsgRef &in) {
  uint64_t epoch = 0;
  if (MapRef m = current_map()) epoch = m->epoch();
  PgId pg = in->pgid;
  switch (in->m.type) {
    case msg::kMsgPgQuery: {
      auto q = in->root<wire::PgQuery>();
      in->conn->send(build_msg<wire::PgNotify>(msg::kMsgPgNotify, [&](wire::PgNotify::Builder b) {
        b.setPool(pg.pool);
        b.setSeed(pg.seed);
        b.setMapEpoch(epoch);
        b.setIntervalEpoch(q.getIntervalEpoch());
        b.setFrom(cfg_.id);
        b.setHasPg(false);
        b.initInfo().setBackfillComplete(true);
      }));
      return;
    }
    case msg::kMsgPgScan: {
      auto s = in->root<wire::PgScan>();
      in->conn->send(build_msg<wire::PgScanReply>(msg::kMsgPgScanReply, [&](wire::PgScanReply::Builder b) {
        b.setPool(pg.pool);
        b.setSeed(pg.seed);
        b.setIntervalEpoch(s.getIntervalEpoch());
        b.setTid(s.getTid());
        b.setFrom(cfg_.id);
      }));
      return;
    }
    case msg::kMsgPgPull: {
      auto p = in->root<wire::PgPull>();
      in->conn->send(build_msg<wire::PgPush>(msg::kMsgPgPush, [&](wire::PgPush::Builder b) {
        b.setPool(pg.pool);
        b.setSeed(pg.seed);
        b.setMapEpoch(epoch);
        b.setIntervalEpoch(p.getIntervalEpoch());
        b.setTid(p.getTid());
        b.setFrom(cfg_.id);
        b.setOid(p.getOid());
        b.setRc(-ENOENT);
      }));
      return;
    }
    case msg::kMsgPgListRequest: {
      auto r = in->root<wire::PgListRequest>();
      in->conn->send(build_msg<wire::PgListReply>(msg::kMsgPgListReply, [&](auto b) {
        b.setTid(r.getTid());
        b.setRetryEpoch(epoch);
      }));
      return;
    }
    case msg::kMsgPgCommand: {
      auto r = in->root<wire::PgCommand>();
      in->conn->send(build_msg<wire::PgCommandReply>(msg::kMsgPgCommandReply, [&](auto b) {
        b.setTid(r.getTid());
        b.setRetryEpoch(epoch);
      }));
      return;
    }
    default:
      return;  // replies and writes for a PG that is gone
  }
}

}  // namespace strata::osd
