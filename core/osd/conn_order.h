// Keeps each connection's messages in arrival order on their way to the PG
// shards when some of them are held back first (a large write being staged
// by the StagePool): a client's ops to one object, and a primary's RepOps
// to a replica, must reach the PG in the order they were sent.
//
// A message that needs no preparation and has nothing queued ahead of it on
// its connection is delivered at once, on the calling thread; otherwise it
// waits for the ones before it, and whichever thread fills the place at the
// head delivers everything ready, in order. Deliveries run outside the lock
// (they may run a PG event inline, see OsdShard::run_or_post).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace strata::osd {

class ConnOrder {
 public:
  using Key = const void *;  // the connection; alive while it has entries here

  // Reserves the next place in `conn`'s order for a message still being
  // prepared; fill() it exactly once.
  uint64_t reserve(Key conn);
  // Puts `deliver` in place `slot` and runs every delivery now at the head
  // of conn's order.
  void fill(Key conn, uint64_t slot, std::function<void()> deliver);
  // reserve() + fill() for a message that is ready now.
  void deliver(Key conn, std::function<void()> deliver);

  size_t connections_waiting() const;

 private:
  struct Pending {
    uint64_t next = 0, head = 0;
    std::map<uint64_t, std::function<void()>> ready;  // filled places after head
    bool draining = false;  // a thread is delivering this connection's head
  };
  // Delivers the ready places at p's head until none is left.
  // REQUIRES: lk holds mu_ and this thread set p.draining.
  void drain(std::unique_lock<std::mutex> &lk, Key conn);
  mutable std::mutex mu_;
  std::unordered_map<Key, Pending> conns_;  // only connections with reserved places
};

}  // namespace strata::osd
