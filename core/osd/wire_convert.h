// Between the OSD's structs and their Cap'n Proto form (wire.capnp): PG
// log entries, infos, missing sets, client ops and replies. Readers come
// from the network and may throw kj::Exception on a malformed message;
// callers run them inside msg::read_message or a try block.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "msg/messenger.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"
#include "osd/op_reply.h"
#include "osd/op_types.h"
#include "osd/types.h"
#include "store/staged_write.h"

namespace strata::osd {

void to_wire(const EVersion &v, wire::EVersion::Builder out);
EVersion from_wire(wire::EVersion::Reader in);
void to_wire(const LogEntry &e, wire::PgLogEntry::Builder out);
LogEntry from_wire(wire::PgLogEntry::Reader in);
void to_wire(const PgInfo &i, wire::PgInfo::Builder out);
PgInfo from_wire(wire::PgInfo::Reader in);

void log_to_wire(const std::vector<LogEntry> &log, capnp::List<wire::PgLogEntry>::Builder out);
std::vector<LogEntry> log_from_wire(capnp::List<wire::PgLogEntry>::Reader in);
void missing_to_wire(const MissingSet &m, capnp::List<wire::MissingItem>::Builder out);
MissingSet missing_from_wire(capnp::List<wire::MissingItem>::Reader in);

// A client op, decoded from an OpRequest, owning its bytes (the data
// segments are moved out of the message, not copied).
struct ClientOp {
  msg::ConnectionRef conn;
  uint64_t tid = 0;
  ReqId reqid;
  PgId pgid;
  std::string oid;
  uint64_t map_epoch = 0;
  bool is_write = false;
  bool full_try = false;  // OpRequest.fullTry: the map's full flags do not refuse it
  std::vector<OsdOp> ops;
  // The one large WRITE_FULL's data, staged on arrival (osd/stage_pool.h).
  store::StagedWriteRef staged;
  // Why staging it failed (ENOSPC: the disk is within its reserve).
  int stage_rc = 0;
  // A read the primary's copy failed is repaired and retried once.
  bool read_repair_tried = false;
};
using ClientOpRef = std::shared_ptr<ClientOp>;

Result<ClientOpRef> decode_op_request(msg::Message &&m, const msg::ConnectionRef &conn);

uint64_t now_ns();  // wall clock, for object mtimes

}  // namespace strata::osd
