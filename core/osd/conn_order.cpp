#include "osd/conn_order.h"

namespace strata::osd {

uint64_t ConnOrder::reserve(Key conn) {
  std::lock_guard lk(mu_);
  return conns_[conn].next++;
}

void ConnOrder::fill(Key conn, uint64_t slot, std::function<void()> deliver) {
  std::lock_guard lk(mu_);
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;  // cannot happen: reserved places keep the entry
  Pending &p = it->second;
  p.ready.emplace(slot, std::move(deliver));
  while (!p.ready.empty() && p.ready.begin()->first == p.head) {
    p.ready.begin()->second();
    p.ready.erase(p.ready.begin());
    ++p.head;
  }
  if (p.head == p.next) conns_.erase(it);
}

void ConnOrder::deliver(Key conn, std::function<void()> deliver) {
  {
    std::lock_guard lk(mu_);
    if (conns_.find(conn) == conns_.end()) {
      deliver();  // nothing ahead of it: the common case, no bookkeeping
      return;
    }
  }
  fill(conn, reserve(conn), std::move(deliver));
}

size_t ConnOrder::connections_waiting() const {
  std::lock_guard lk(mu_);
  return conns_.size();
}

}  // namespace strata::osd
