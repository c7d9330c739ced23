// The journal-overflow workload: sequential 4 MiB writes totalling several
// times the journal's capacity, with per-second throughput, to show whether
// writes keep the backing store's pace once the journal has filled.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "bench/store/load_generator.h"
#include "bench/store/payload.h"
#include "bench/store/stats.h"
#include "bench/store/workloads.h"

namespace strata::store_bench {

namespace {

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Samples the journal's fill while a workload runs; the peak shows whether
// back-pressure held it below full. stats() may wait for a queue() blocked
// in the journal, which only delays a sample.
class FillSampler {
 public:
  explicit FillSampler(store::Store &store) : store_(store), thread_([this] { loop(); }) {}
  ~FillSampler() { stop(); }
  double stop() {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return peak_pct_;
  }

 private:
  void loop() {
    std::unique_lock lk(mu_);
    while (!stopping_) {
      lk.unlock();
      store::StoreStats s = store_.stats();
      if (s.has_journal && s.journal.capacity_bytes)
        peak_pct_ =
            std::max(peak_pct_.load(), 100.0 * s.journal.used_bytes / s.journal.capacity_bytes);
      lk.lock();
      cv_.wait_for(lk, std::chrono::milliseconds(100), [&] { return stopping_; });
    }
  }
  store::Store &store_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  std::atomic<double> peak_pct_{0};
  std::thread thread_;
};

}  // namespace

Result<WorkloadFigures> run_overflow(store::Store &store, const OverflowSpec &o) {
  const std::string coll = "bench.overflow";
  Status st = ensure_collection(store, coll);
  if (st.ok()) st = store.checkpoint_now();
  if (!st.ok()) return st;
  const uint64_t ring = std::max<uint64_t>(1, o.ring_bytes / k4M);
  store::StoreStats before = store.stats();
  LoadSpec spec;
  spec.depth = 4;
  spec.min_seconds = o.min_seconds;
  spec.max_seconds = o.max_seconds;
  spec.target_bytes = static_cast<uint64_t>(o.factor * static_cast<double>(o.journal_capacity));
  spec.make = write_full_objects(coll, "o.", k4M, ring);
  FillSampler sampler(store);
  auto r = run_closed_loop(store, spec);
  double peak = sampler.stop();
  if (!r.ok()) return r.status().Context(o.name);
  store::StoreStats after = store.stats();

  WindowSummary win = summarize_windows(r->bytes_per_tick, kTickSeconds, r->seconds);
  WorkloadFigures w;
  w.name = o.name;
  w.add("mb_per_sec", r->bytes_per_sec() / kMB, "MB/s");
  w.add("second_half_mb_per_sec", win.second_half_bytes_per_sec / kMB, "MB/s");
  if (win.has_window) {
    w.add("min_window_mb_per_sec", win.min_window_bytes_per_sec / kMB, "MB/s");
    w.add("min_window_start_s", win.min_window_start_s, "s");
  } else {
    w.notes.push_back("the run was shorter than one second: no 1 s window");
  }
  w.add("written", static_cast<double>(r->bytes) / (1 << 20), "MiB");
  w.add("journal_capacities_written",
        o.journal_capacity ? static_cast<double>(r->bytes) / o.journal_capacity : 0, "x");
  w.add("seconds", r->seconds, "s");
  add_latency(w, r->latency_us, 1000.0, "ms");
  w.add("journal_fill_peak_pct", peak, "%");
  w.add("throttle_sleeps", static_cast<double>(after.throttle_sleeps - before.throttle_sleeps), "");
  w.add("throttle_seconds", after.throttle_seconds - before.throttle_seconds, "s");
  w.add("checkpoints", static_cast<double>(after.checkpoints - before.checkpoints), "");
  w.add("staged_writes", static_cast<double>(after.staged_writes - before.staged_writes), "");
  w.add("drain_mb_per_sec", after.drain_bytes_per_sec / kMB, "MB/s");
  for (double b : win.per_second) w.per_second_mb.push_back(b / kMB);
  if (static_cast<double>(r->bytes) < spec.target_bytes)
    w.notes.push_back("stopped after " + format_number(o.max_seconds) +
                      " s, short of the target of " + format_number(o.factor) +
                      "x the journal capacity");
  return w;
}

}  // namespace strata::store_bench
