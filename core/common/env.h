// The environment a daemon runs in: its clock and its failpoints (after
// LevelDB's Env). A daemon's main owns one and hands it down to what
// needs time or fault injection; a test builds one around a FakeClock
// and arms failpoints on it. No global state: two daemons in one test
// process have two Envs.
//
// Threading: the clock and the failpoints are thread-safe; the Env must
// outlive everything it was handed to.
#pragma once

#include "common/clock.h"
#include "common/failpoints.h"

namespace strata {

class Env {
 public:
  // The system clock.
  Env() : clock_(&system_clock_), failpoints_(*clock_) {}
  // `clock` (a test's FakeClock) must outlive the Env.
  explicit Env(Clock &clock) : clock_(&clock), failpoints_(clock) {}
  Env(const Env &) = delete;
  Env &operator=(const Env &) = delete;

  Clock &clock() const { return *clock_; }
  FailPoints &failpoints() { return failpoints_; }

 private:
  SystemClock system_clock_;
  Clock *clock_;
  FailPoints failpoints_;
};

}  // namespace strata
