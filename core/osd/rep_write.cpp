#include "osd/rep_write.h"

#include <algorithm>

#include "osd/op_reply.h"
#include "osd/osd_failpoints.h"
#include "osd/pg_host.h"
#include "osd/wire_convert.h"

namespace strata::osd {

CopyAcks::CopyAcks(std::vector<int32_t> replicas)
    : replicas_(std::move(replicas)),
      acked_(std::make_unique<std::atomic<bool>[]>(replicas_.size() + 1)),
      pending_(replicas_.size() + 1) {}

CopyAcks::Ack CopyAcks::count(size_t copy) {
  if (acked_[copy].exchange(true)) return Ack::kDuplicate;
  return pending_.fetch_sub(1) == 1 ? Ack::kLast : Ack::kCounted;
}

CopyAcks::Ack CopyAcks::local() { return count(0); }

CopyAcks::Ack CopyAcks::replica(int32_t osd, int32_t rc) {
  if (rc != 0) return Ack::kFailed;
  auto pos = std::find(replicas_.begin(), replicas_.end(), osd);
  if (pos == replicas_.end()) return Ack::kUnknownReplica;
  return count(static_cast<size_t>(pos - replicas_.begin()) + 1);
}

void send_write_reply(PgHost &host, RepWrite &w) {
  if (!w.claim() || !w.conn) return;
  // Every copy is durable, the client has heard nothing yet.
  if (host.env().failpoints().hit(kFailWriteDurableBeforeAck, w.oid) != 0) {
    host.log().warn("osd", "pg " + pg_str(w.pgid) + ": write to " + w.oid +
                               " durable everywhere; its ack dropped by a failpoint");
    return;
  }
  if (host.log().level() <= STRATA_LOG_DEBUG) {
    auto op = std::static_pointer_cast<ClientOp>(w.op);
    host.log().debug("osd", "op " + op->reqid.client + ":" + std::to_string(op->tid) + " acked");
  }
  send_op_reply(w.conn, w.client_tid, std::move(w.reply),
                [&] { return "pg " + pg_str(w.pgid) + " write to '" + w.oid + "' (applied)"; });
}

void RepWriteTable::track(const WriteRef &w) {
  std::lock_guard lk(mu_);
  writes_[w->rep_tid] = w;
}

void RepWriteTable::untrack(uint64_t rep_tid) {
  std::lock_guard lk(mu_);
  writes_.erase(rep_tid);
}

WriteRef RepWriteTable::find(uint64_t rep_tid) const {
  std::lock_guard lk(mu_);
  auto it = writes_.find(rep_tid);
  return it == writes_.end() ? nullptr : it->second;
}

}  // namespace strata::osd
