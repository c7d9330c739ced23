#include "bench/store/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::store_bench {

double percentile(std::vector<double> &values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(q * static_cast<double>(values.size()));
  size_t idx = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(idx, values.size() - 1)];
}

WindowSummary summarize_windows(const std::vector<uint64_t> &bytes_per_tick, double tick_s,
                                double seconds) {
  WindowSummary w;
  // Only ticks wholly inside the run count as full ticks.
  size_t full_ticks = std::min(bytes_per_tick.size(),
                               static_cast<size_t>(std::floor(seconds / tick_s + 1e-9)));
  auto sum = [&](size_t from, size_t to) {  // [from, to) over all recorded ticks
    uint64_t s = 0;
    for (size_t i = from; i < to && i < bytes_per_tick.size(); ++i) s += bytes_per_tick[i];
    return static_cast<double>(s);
  };
  size_t half = static_cast<size_t>(std::floor(seconds / 2 / tick_s));
  double half_len = seconds - static_cast<double>(half) * tick_s;
  if (half_len > 0) w.second_half_bytes_per_sec = sum(half, bytes_per_tick.size()) / half_len;

  size_t per_window = static_cast<size_t>(std::lround(1.0 / tick_s));
  if (full_ticks >= per_window) {
    w.has_window = true;
    double lowest = std::numeric_limits<double>::max();
    for (size_t start = 0; start + per_window <= full_ticks; ++start) {
      double b = sum(start, start + per_window);
      if (b < lowest) {
        lowest = b;
        w.min_window_start_s = static_cast<double>(start) * tick_s;
      }
    }
    w.min_window_bytes_per_sec = lowest / (static_cast<double>(per_window) * tick_s);
    for (size_t s = 0; (s + 1) * per_window <= full_ticks; ++s)
      w.per_second.push_back(sum(s * per_window, (s + 1) * per_window) /
                             (static_cast<double>(per_window) * tick_s));
  }
  return w;
}

}  // namespace strata::store_bench
