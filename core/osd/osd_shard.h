// One op thread and the PGs it owns. Every message and event for a PG runs
// on its shard's thread, in arrival order, so a PG needs no locks and the
// ops of one client on one PG keep their order; different PGs run in
// parallel on different shards (osd_op_threads).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "osd/pg.h"

namespace strata::osd {

class OsdShard {
 public:
  explicit OsdShard(int index) : index_(index) {}
  ~OsdShard() { stop(); }
  OsdShard(const OsdShard &) = delete;
  OsdShard &operator=(const OsdShard &) = delete;

  void start();
  // Finishes the event running now and stops; later posts are dropped.
  void stop();
  // Thread-safe; runs fn on the shard thread.
  void post(std::function<void()> fn);
  // Runs fn on the calling thread when the shard is idle (nothing queued,
  // no event running), else posts it. A messenger thread delivering a
  // message this way saves waking the shard thread, which on this kind of
  // VM (halted vCPUs are slow to wake) is a large part of a small op's
  // latency. Events still run one at a time and in order.
  void run_or_post(std::function<void()> fn);
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
  void loop();
  const int index_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // GUARDED_BY(mu_)
  bool running_ = false, stopping_ = false;  // GUARDED_BY(mu_)
  bool busy_ = false;                        // an event runs (here or on a caller); GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace strata::osd
