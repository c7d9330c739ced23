#include "osd/conn_order.h"

#include <vector>

namespace strata::osd {

uint64_t ConnOrder::reserve(Key conn) {
  std::lock_guard lk(mu_);
  return conns_[conn].next++;
}

void ConnOrder::fill(Key conn, uint64_t slot, std::function<void()> deliver) {
  std::unique_lock lk(mu_);
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;  // cannot happen: reserved places keep the entry
  Pending &p = it->second;
  p.ready.emplace(slot, std::move(deliver));
  if (p.draining) return;  // that thread delivers this one too, in its turn
  p.draining = true;
  drain(lk, conn);
}

void ConnOrder::drain(std::unique_lock<std::mutex> &lk, Key conn) {
  std::vector<std::function<void()>> run;
  for (;;) {
    Pending &p = conns_.at(conn);  // stays while draining is set
    while (!p.ready.empty() && p.ready.begin()->first == p.head) {
      run.push_back(std::move(p.ready.begin()->second));
      p.ready.erase(p.ready.begin());
      ++p.head;
    }
    if (run.empty()) {
      p.draining = false;
      if (p.head == p.next) conns_.erase(conn);
      return;
    }
    lk.unlock();
    for (auto &fn : run) fn();
    run.clear();
    lk.lock();
  }
}

void ConnOrder::deliver(Key conn, std::function<void()> deliver) {
  std::unique_lock lk(mu_);
  if (conns_.find(conn) == conns_.end()) {
    // Nothing ahead of it (the common case): no bookkeeping. A connection's
    // messages arrive on one thread at a time, so none can overtake it.
    lk.unlock();
    deliver();
    return;
  }
  Pending &p = conns_[conn];
  p.ready.emplace(p.next++, std::move(deliver));
  if (p.draining) return;
  p.draining = true;
  drain(lk, conn);
}

size_t ConnOrder::connections_waiting() const {
  std::lock_guard lk(mu_);
  return conns_.size();
}

}  // namespace strata::osd
