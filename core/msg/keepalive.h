// Keepalive of a session with the monitor (an OSD's, a client's): a ping
// every `interval`, and the session given up when nothing at all has come
// back for `timeout`, so that a connection the network silently dropped is
// closed and made again within seconds, instead of waiting on TCP's
// retransmission back-off (which after a 30 s cut waited almost as long
// again). Any message from the monitor counts as an answer.
//
// The ping is the monitor command "ping": no new message type, so that
// even a monitor that does not know the command answers (with an error
// reply, which proves the session alive just as well).
//
// Threading: none; the owner serialises calls.
#pragma once

#include <chrono>
#include <cstdint>

#include "msg/messenger.h"

namespace strata::msg {

class SessionKeepalive {
 public:
  using Clock = std::chrono::steady_clock;

  // interval 0: keepalive off (due() never asks for anything).
  SessionKeepalive(std::chrono::milliseconds interval, std::chrono::milliseconds timeout)
      : interval_(interval), timeout_(timeout) {}

  // A new connection: counts as heard from now.
  void reset(Clock::time_point now) {
    last_rx_ = now;
    last_ping_ = now;
  }
  void on_rx(Clock::time_point now) { last_rx_ = now; }

  enum class Action { kNothing, kPing, kGiveUp };
  // What to do now: give the session up (silent for longer than the
  // timeout), send a ping (one interval since the last), or nothing.
  Action due(Clock::time_point now) {
    if (interval_.count() <= 0) return Action::kNothing;
    if (now - last_rx_ > timeout_) return Action::kGiveUp;
    if (now - last_ping_ >= interval_) {
      last_ping_ = now;
      return Action::kPing;
    }
    return Action::kNothing;
  }
  std::chrono::milliseconds silent_for(Clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - last_rx_);
  }
  std::chrono::milliseconds interval() const { return interval_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::chrono::milliseconds interval_, timeout_;
  Clock::time_point last_rx_{}, last_ping_{};
};

// The monitor command "ping" with `tid` (a MonCommand frame).
Message make_mon_ping(uint64_t tid);

}  // namespace strata::msg
