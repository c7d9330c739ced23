// A client write in flight on its primary, and the counting of its copies'
// acknowledgements. The local commit (a store thread) and each replica's
// RepOpReply (a messenger thread) are counted here, without a lock; the ack
// that completes the count sends the prepared reply at once, without a
// detour through the PG's shard, and tells the shard afterwards
// (Pg::write_settled releases the object).
//
//   primary, do_write:   w = RepWrite(replicas); table.track(w); send RepOps; queue locally
//   store thread:        if (w->acks.local() == kLast) send_write_reply(host, *w)
//   messenger thread:    if (w->acks.replica(from, rc) == kLast) send_write_reply(host, *w)
//   interval change:     if (w->claim()) run the op again (the log answers it if applied)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "msg/messenger.h"
#include "osd/types.h"

namespace strata::osd {

class PgHost;

// The acknowledgements of one write's copies: its own (local) and one per
// replica, each counted at most once. Thread-safe and lock-free.
class CopyAcks {
 public:
  enum class Ack {
    kCounted,         // counted; other copies are still missing
    kLast,            // counted, and it completed the count (exactly one ack gets this)
    kDuplicate,       // that copy was counted already (a resent reply)
    kUnknownReplica,  // the sender is not one of this write's replicas
    kFailed,          // the replica could not persist the write (rc != 0): not counted
  };

  explicit CopyAcks(std::vector<int32_t> replicas);

  Ack local();
  Ack replica(int32_t osd, int32_t rc);
  // Every copy acknowledged.
  bool complete() const { return pending_.load() == 0; }
  const std::vector<int32_t> &replicas() const { return replicas_; }

 private:
  Ack count(size_t copy);

  const std::vector<int32_t> replicas_;
  // [0]: the local copy, [i + 1]: replicas_[i].
  const std::unique_ptr<std::atomic<bool>[]> acked_;
  std::atomic<size_t> pending_;
};

struct RepWrite {
  explicit RepWrite(std::vector<int32_t> replicas) : acks(std::move(replicas)) {}

  // True for exactly one caller: the one that sends the reply (the last
  // ack) or the PG abandoning the write at an interval change, whichever
  // comes first.
  bool claim() { return !claimed_.exchange(true); }

  CopyAcks acks;
  PgId pgid;
  uint64_t generation = 0;  // of the PG instance
  uint64_t rep_tid = 0;     // unique in this OSD run
  msg::ConnectionRef conn;
  msg::Message reply;
  uint64_t client_tid = 0;   // the client's tid of the op `reply` answers
  std::shared_ptr<void> op;  // the ClientOp, to run it again if abandoned
  std::string oid;

 private:
  std::atomic<bool> claimed_{false};
};
using WriteRef = std::shared_ptr<RepWrite>;

// Sends w's prepared reply to its client, unless it was claimed already.
// Any thread.
void send_write_reply(PgHost &host, RepWrite &w);

// This OSD's writes in flight by rep tid, for the threads replica acks
// arrive on. Thread-safe.
class RepWriteTable {
 public:
  void track(const WriteRef &w);
  void untrack(uint64_t rep_tid);
  // Null when settled or abandoned.
  WriteRef find(uint64_t rep_tid) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, WriteRef> writes_;  // GUARDED_BY(mu_)
};

}  // namespace strata::osd
