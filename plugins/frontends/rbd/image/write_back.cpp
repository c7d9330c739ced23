#include "write_back.h"

#include <condition_variable>

namespace strata::rbd {

namespace {

bool overlaps(uint64_t a_off, uint64_t a_len, uint64_t b_off, uint64_t b_len) {
  return a_off < b_off + b_len && b_off < a_off + a_len;
}

}  // namespace

uint64_t WriteBack::admit(uint64_t off, uint64_t len, bool early_ack, Done done) {
  std::vector<Done> answers;
  uint64_t ticket;
  {
    std::lock_guard lk(m_);
    ticket = next_ticket_++;
    changes_.emplace(ticket, Change{off, len, early_ack && enabled(), false, std::move(done)});
    answer_locked(&answers);
  }
  for (auto &a : answers) a(0);
  return ticket;
}

void WriteBack::answer_locked(std::vector<Done> *answers) {
  for (auto &[ticket, c] : changes_) {
    if (!c.early || c.answered) continue;
    // Always room for one: a write larger than the budget is not made to
    // wait for its own completion when nothing else is answered.
    if (answered_bytes_ > 0 && answered_bytes_ + c.len > max_bytes_) return;
    c.answered = true;
    answered_bytes_ += c.len;
    answers->push_back(std::move(c.done));
    c.done = nullptr;
  }
}

bool WriteBack::blocked_locked(uint64_t before, uint64_t off, uint64_t len) const {
  for (const auto &[ticket, c] : changes_) {
    if (ticket >= before) break;
    if (overlaps(off, len, c.off, c.len)) return true;
  }
  return false;
}

void WriteBack::park_or_run(Parked p) {
  {
    std::lock_guard lk(m_);
    if (blocked_locked(p.before, p.off, p.len)) {
      parked_.push_back(std::move(p));
      return;
    }
  }
  p.go();
}

void WriteBack::when_ordered(uint64_t ticket, Go go) {
  uint64_t off, len;
  {
    std::lock_guard lk(m_);
    auto it = changes_.find(ticket);
    if (it == changes_.end()) {
      // Not admitted or finished already: nothing to order after.
      off = len = 0;
    } else {
      off = it->second.off;
      len = it->second.len;
    }
  }
  park_or_run({ticket, off, len, std::move(go)});
}

void WriteBack::when_clear(uint64_t off, uint64_t len, Go go) {
  uint64_t before;
  {
    std::lock_guard lk(m_);
    before = next_ticket_;
  }
  park_or_run({before, off, len, std::move(go)});
}

void WriteBack::wait_clear(uint64_t off, uint64_t len) {
  std::mutex m;
  std::condition_variable cv;
  bool clear = false;
  when_clear(off, len, [&] {
    std::lock_guard lk(m);
    clear = true;
    cv.notify_all();
  });
  std::unique_lock lk(m);
  cv.wait(lk, [&] { return clear; });
}

bool WriteBack::finish(uint64_t ticket, int rc) {
  Done mine;
  std::vector<Done> answers;
  std::vector<Go> runnable;
  {
    std::lock_guard lk(m_);
    auto it = changes_.find(ticket);
    if (it == changes_.end()) return false;
    if (it->second.answered) {
      answered_bytes_ -= it->second.len;
    } else {
      mine = std::move(it->second.done);
    }
    changes_.erase(it);
    answer_locked(&answers);
    // Parked requests in arrival order; one still blocked does not hold
    // back a later one that is not (they do not overlap what blocks it).
    for (auto p = parked_.begin(); p != parked_.end();) {
      if (blocked_locked(p->before, p->off, p->len)) {
        ++p;
      } else {
        runnable.push_back(std::move(p->go));
        p = parked_.erase(p);
      }
    }
  }
  // Answers first: a writer answered here may already be told before the
  // requests this completion lets go start.
  if (mine) mine(rc);
  for (auto &a : answers) a(0);
  for (auto &g : runnable) g();
  return static_cast<bool>(mine);
}

uint64_t WriteBack::answered_bytes() const {
  std::lock_guard lk(m_);
  return answered_bytes_;
}

uint64_t WriteBack::in_flight() const {
  std::lock_guard lk(m_);
  return changes_.size();
}

}  // namespace strata::rbd
