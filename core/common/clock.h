// Time as the daemons see it, behind an interface so that tests can hold it
// still and move it on by hand (FakeClock) instead of sleeping through
// timeouts of seconds or minutes.
//
// Threading: both clocks are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace strata {

class Clock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  // Monotonic time, for intervals and deadlines.
  virtual SteadyTime now() const = 0;
  // Milliseconds since the Unix epoch, for times that are stored or shown.
  virtual uint64_t wall_ms() const = 0;
  // Waits `d` (a fake clock moves itself on by `d` instead).
  virtual void sleep_for(std::chrono::milliseconds d) = 0;
};

// The machine's clocks.
class SystemClock final : public Clock {
 public:
  SteadyTime now() const override;
  uint64_t wall_ms() const override;
  void sleep_for(std::chrono::milliseconds d) override;
};

// A clock that moves only when told to: advance() (or sleep_for) moves
// steady and wall time on together.
class FakeClock final : public Clock {
 public:
  // Starts at an arbitrary steady time and at `wall_start_ms`.
  explicit FakeClock(uint64_t wall_start_ms = 1'700'000'000'000ull);

  SteadyTime now() const override;
  uint64_t wall_ms() const override;
  void sleep_for(std::chrono::milliseconds d) override { advance(d); }
  void advance(std::chrono::milliseconds d);

 private:
  const uint64_t wall_start_ms_;
  std::atomic<int64_t> elapsed_ms_{0};
};

}  // namespace strata
