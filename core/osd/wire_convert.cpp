#include "osd/wire_convert.h"

#include <capnp/message.h>

#include "msg/message_types.h"
#include "osd/op_exec.h"

namespace strata::osd {

// The OSD's op enums mirror the wire's so that decoding is a cast.
static_assert(static_cast<uint16_t>(wire::OpCode::LIST_SNAPS) ==
              static_cast<uint16_t>(OpCode::kListSnaps));
static_assert(static_cast<uint16_t>(wire::OpCode::OMAP_LIST) ==
              static_cast<uint16_t>(OpCode::kOmapList));
static_assert(static_cast<uint16_t>(wire::OpCode::SET_XATTR) ==
              static_cast<uint16_t>(OpCode::kSetXattr));
static_assert(static_cast<uint16_t>(wire::CmpMode::LE) == static_cast<uint16_t>(CmpMode::kLe));

void to_wire(const EVersion &v, wire::EVersion::Builder out) {
  out.setEpoch(v.epoch);
  out.setVersion(v.version);
}

EVersion from_wire(wire::EVersion::Reader in) { return EVersion{in.getEpoch(), in.getVersion()}; }

void to_wire(const LogEntry &e, wire::PgLogEntry::Builder out) {
  to_wire(e.version, out.initVersion());
  out.setOid(e.oid);
  out.setOp(static_cast<uint8_t>(e.op));
  out.setClient(e.reqid.client);
  out.setTid(e.reqid.tid);
  out.setRc(e.rc);
  out.setMtimeNs(e.mtime_ns);
}

LogEntry from_wire(wire::PgLogEntry::Reader in) {
  LogEntry e;
  e.version = from_wire(in.getVersion());
  e.oid = in.getOid();
  e.op = in.getOp() == 2 ? LogOp::kDelete : LogOp::kModify;
  e.reqid.client = in.getClient();
  e.reqid.tid = in.getTid();
  e.rc = in.getRc();
  e.mtime_ns = in.getMtimeNs();
  return e;
}

void to_wire(const PgInfo &i, wire::PgInfo::Builder out) {
  out.setPool(i.pgid.pool);
  out.setSeed(i.pgid.seed);
  to_wire(i.last_update, out.initLastUpdate());
  to_wire(i.log_tail, out.initLogTail());
  out.setLastEpochStarted(i.les);
  out.setBackfillComplete(i.backfill_complete);
  auto list = out.initPastIntervals(static_cast<unsigned>(i.past_intervals.size()));
  for (unsigned k = 0; k < i.past_intervals.size(); ++k) {
    const PastInterval &p = i.past_intervals[k];
    auto b = list[k];
    b.setFirst(p.first);
    b.setLast(p.last);
    b.setPrimary(p.primary);
    b.setMaybeWentRw(p.maybe_went_rw);
    auto a = b.initActing(static_cast<unsigned>(p.acting.size()));
    for (unsigned j = 0; j < p.acting.size(); ++j) a.set(j, p.acting[j]);
  }
}

PgInfo from_wire(wire::PgInfo::Reader in) {
  PgInfo i;
  i.pgid = PgId{in.getPool(), in.getSeed()};
  i.last_update = from_wire(in.getLastUpdate());
  i.log_tail = from_wire(in.getLogTail());
  i.les = in.getLastEpochStarted();
  i.backfill_complete = in.getBackfillComplete();
  for (auto p : in.getPastIntervals()) {
    PastInterval pi;
    pi.first = p.getFirst();
    pi.last = p.getLast();
    pi.primary = p.getPrimary();
    pi.maybe_went_rw = p.getMaybeWentRw();
    for (int32_t o : p.getActing()) pi.acting.push_back(o);
    i.past_intervals.push_back(std::move(pi));
  }
  return i;
}

void log_to_wire(const std::vector<LogEntry> &log, capnp::List<wire::PgLogEntry>::Builder out) {
  for (unsigned k = 0; k < log.size(); ++k) to_wire(log[k], out[k]);
}

std::vector<LogEntry> log_from_wire(capnp::List<wire::PgLogEntry>::Reader in) {
  std::vector<LogEntry> out;
  out.reserve(in.size());
  for (auto e : in) out.push_back(from_wire(e));
  return out;
}

void missing_to_wire(const MissingSet &m, capnp::List<wire::MissingItem>::Builder out) {
  unsigned k = 0;
  for (const auto &[oid, item] : m) {
    auto b = out[k++];
    b.setOid(oid);
    to_wire(item.need, b.initNeed());
    b.setIsDelete(item.is_delete);
  }
}

MissingSet missing_from_wire(capnp::List<wire::MissingItem>::Reader in) {
  MissingSet m;
  for (auto i : in) m[i.getOid()] = MissingItem{from_wire(i.getNeed()), i.getIsDelete()};
  return m;
}

Result<ClientOpRef> decode_op_request(msg::Message &&m, const msg::ConnectionRef &conn) {
  auto op = std::make_shared<ClientOp>();
  op->conn = conn;
  Status st = msg::read_message<wire::OpRequest>(m, "OpRequest", [&](wire::OpRequest::Reader r) {
    op->tid = r.getTid();
    op->reqid = ReqId{r.getClient(), r.getTid()};
    // A caller-chosen request id names the write across client instances;
    // the prefix keeps it apart from instance names ("client.NAME.<hex>").
    if (r.hasRequestId() && r.getRequestId().size() > 0)
      op->reqid = ReqId{"request:" + std::string(r.getRequestId().cStr()), 0};
    op->pgid = PgId{r.getPool(), r.getSeed()};
    op->oid = r.getOid();
    op->map_epoch = r.getMapEpoch();
    op->is_write = r.getIsWrite();
    op->full_try = r.getFullTry();
    auto ops = r.getOps();
    op->ops.reserve(ops.size());
    for (auto o : ops) {
      OsdOp x;
      x.code = static_cast<OpCode>(o.getCode());
      if (static_cast<uint16_t>(x.code) > static_cast<uint16_t>(OpCode::kListSnaps))
        return Status::Error(EOPNOTSUPP, "OpRequest: unknown op code " +
                                             std::to_string(static_cast<uint16_t>(x.code)));
      x.offset = o.getOffset();
      x.length = o.getLength();
      x.name = o.getName();
      x.name2 = o.getName2();
      int32_t seg = o.getDataSeg();
      if (seg >= 0) {
        if (static_cast<size_t>(seg) >= m.segments.size())
          return Status::Error(EBADMSG, "OpRequest: data segment " + std::to_string(seg) +
                                            " out of range");
        // Each segment belongs to one op: move it, no copy.
        x.data = std::move(m.segments[static_cast<size_t>(seg)]);
      }
      for (auto k : o.getKeys()) x.keys.emplace_back(reinterpret_cast<const char *>(k.begin()), k.size());
      for (auto v : o.getValues())
        x.values.emplace_back(reinterpret_cast<const char *>(v.begin()), v.size());
      x.version = o.getVersion();
      x.cmp = static_cast<CmpMode>(o.getCmpMode());
      x.flags = o.getFlags();
      op->ops.push_back(std::move(x));
    }
    return Status::OK();
  });
  if (!st.ok()) return st;
  op->is_write = op->is_write || any_mutation(op->ops);
  return op;
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace strata::osd
