// One op thread and the PGs it owns. Every message and event for a PG runs
// on its shard's thread, in arrival order, so a PG needs no locks and the
// ops of one client on one PG keep their order; different PGs run in
// parallel on different shards (osd_op_threads).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "common/work_queue.h"
#include "osd/pg.h"

namespace strata::osd {

class OsdShard {
 public:
  explicit OsdShard(int index)
      : index_(index), queue_({.name = "osd-shard-" + std::to_string(index)}) {}
  OsdShard(const OsdShard &) = delete;
  OsdShard &operator=(const OsdShard &) = delete;

  void start() { queue_.start(); }
  // Finishes the event running now and stops; later posts are dropped.
  void stop() { queue_.stop(); }
  // Thread-safe; runs fn on the shard thread.
  void post(std::function<void()> fn) { queue_.post(std::move(fn)); }
  // Runs fn on the calling thread when the shard is idle (nothing queued,
  // no event running), else posts it. A messenger thread delivering a
  // message this way saves waking the shard thread, which on this kind of
  // VM (halted vCPUs are slow to wake) is a large part of a small op's
  // latency. Events still run one at a time and in order.
  void run_or_post(std::function<void()> fn) { queue_.run_or_post(std::move(fn)); }
  int index() const { return index_; }

  // --- owned by the shard thread (or by start-up code before start()) ---
  // A forgotten PG (removed, waiting to be deleted) is not there.
  Pg *pg(PgId id) {
    auto it = pgs.find(id);
    return it == pgs.end() || it->second->forgotten() ? nullptr : it->second.get();
  }
  std::map<PgId, std::unique_ptr<Pg>> pgs;
  MapRef map;  // the newest map the shard's PGs have advanced to
  // Messages from senders with a newer map, in arrival order.
  std::deque<std::pair<uint64_t, std::function<void()>>> waiting_for_map;
  uint64_t next_generation = 1;

 private:
  const int index_;
  // Declared last: destroyed (stopped and joined) first, while the PGs its
  // events touch still exist.
  WorkQueue queue_;
};

}  // namespace strata::osd
