// A closed-loop load generator over Store::queue: up to `depth` transactions
// outstanding; each completion callback records the transaction's latency
// and frees its slot. A few submitting threads fill the free slots, so that
// a queue() that blocks (a staged write being stored, back-pressure, a full
// journal) holds up one submitter, not the whole load, and the store's own
// concurrency limits show instead of the harness's. Submitting never
// happens on a callback: callbacks run on store threads, and a queue() from
// the apply thread could block on a full journal only that thread can trim.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace strata::store_bench {

inline constexpr double kTickSeconds = 0.1;

struct LoadSpec {
  int depth = 1;
  // Issuing stops once `max_seconds` have passed, or once both
  // `min_seconds` have passed and `target_bytes` payload bytes were issued.
  double min_seconds = 0;
  double max_seconds = 3;
  uint64_t target_bytes = 0;
  // Builds the i-th transaction (i from 0) and says how many payload bytes
  // it carries. Called from several threads at once: must depend on i only.
  std::function<store::Transaction(uint64_t i, uint64_t &bytes)> make;
};

struct LoadResult {
  uint64_t ops = 0;       // completed successfully
  uint64_t bytes = 0;     // payload bytes of those
  double seconds = 0;     // first queue() to last completion
  std::vector<double> latency_us;  // per completed transaction, queue() to callback
  // Completed bytes per tick of kTickSeconds since the start; the last tick
  // may be partly covered (seconds says how far).
  std::vector<uint64_t> bytes_per_tick;
  double ops_per_sec() const { return seconds > 0 ? ops / seconds : 0; }
  double bytes_per_sec() const { return seconds > 0 ? bytes / seconds : 0; }
};

// Runs the loop and waits for every queued transaction. Fails with the first
// error a queue() or a callback reported (after draining what was queued).
Result<LoadResult> run_closed_loop(store::Store &store, const LoadSpec &spec);

}  // namespace strata::store_bench
