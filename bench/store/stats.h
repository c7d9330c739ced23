// Summaries of what a load run recorded: latency percentiles and throughput
// over time windows.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::store_bench {

// Nearest-rank percentile (q in [0,1]) of `values`, which it sorts. 0 if empty.
double percentile(std::vector<double> &values, double q);

struct WindowSummary {
  double second_half_bytes_per_sec = 0;  // over [T/2, T]
  bool has_window = false;               // the run lasted at least one second
  double min_window_bytes_per_sec = 0;   // lowest 1 s window fully inside [0, T]
  double min_window_start_s = 0;
  std::vector<double> per_second;        // bytes/s of each whole second [k, k+1)
};

// From completed bytes per tick (tick_s long each) over a run of `seconds`.
// The minimum uses windows of one second sliding by one tick, so that a
// stall straddling a second boundary is not halved.
WindowSummary summarize_windows(const std::vector<uint64_t> &bytes_per_tick, double tick_s,
                                double seconds);

}  // namespace strata::store_bench
