#include "common/clock.h"

#include <thread>

namespace strata {

Clock::SteadyTime SystemClock::now() const { return std::chrono::steady_clock::now(); }

uint64_t SystemClock::wall_ms() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

void SystemClock::sleep_for(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

FakeClock::FakeClock(uint64_t wall_start_ms) : wall_start_ms_(wall_start_ms) {}

Clock::SteadyTime FakeClock::now() const {
  // Far from the steady clock's epoch, so that "now - interval" never
  // lands before it.
  return SteadyTime(std::chrono::hours(24 * 365)) +
         std::chrono::milliseconds(elapsed_ms_.load(std::memory_order_acquire));
}

uint64_t FakeClock::wall_ms() const {
  return wall_start_ms_ + static_cast<uint64_t>(elapsed_ms_.load(std::memory_order_acquire));
}

void FakeClock::advance(std::chrono::milliseconds d) {
  elapsed_ms_.fetch_add(d.count(), std::memory_order_acq_rel);
}

}  // namespace strata
