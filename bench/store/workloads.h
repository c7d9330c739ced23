// The store workloads of issue 2 "Performance". Each runs on an open store,
// checkpoints first so that it starts with an empty journal, uses a
// collection of its own, and returns its figures; the caller removes the
// collection afterwards (remove_collection).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/store/report.h"
#include "common/status.h"
#include "store/store.h"

namespace strata::store_bench {

// The objects the 4 KiB overwrite workloads write into: written in full
// before any measurement, like the file fio overwrites.
struct OverwriteSet {
  std::string coll = "bench.overwrite";
  int objects = 16;
  uint64_t object_size = 4ull << 20;
  uint64_t bytes() const { return objects * object_size; }
};

Status prepare_overwrites(store::Store &store, const OverwriteSet &set);

// What the 4 KiB overwrite slices of one queue depth added up to.
struct OverwriteTotals {
  int depth = 1;
  uint64_t ops = 0;
  double seconds = 0;
  std::vector<double> latency_us;
  bool has_journal = false;
  uint64_t device_writes = 0, records = 0;  // the journal's, during the slices
};

// One slice: 4 KiB writes at random 4 KiB-aligned offsets of the set,
// `totals.depth` transactions outstanding, for `seconds`; adds to totals.
// Slices of several depths and of the fio baseline are interleaved by the
// caller so that a shared machine's noise hits all of them alike.
Status overwrite_slice(store::Store &store, const OverwriteSet &set, double seconds,
                       OverwriteTotals &totals);

// Figures: iops, p50_us, p99_us, and the journal's group-commit ratio
// (records_per_device_write).
WorkloadFigures summarize_overwrites(const std::string &name, OverwriteTotals &totals);

// write_full of new 4 KiB objects at queue depth 16: creates/s.
Result<WorkloadFigures> run_creates(store::Store &store, double seconds);

// write_full of new 4 MiB objects at queue depth 4: MB/s. Stops early after
// `max_bytes`, so that a fast disk does not fill a small file system.
Result<WorkloadFigures> run_write4m(store::Store &store, double seconds, uint64_t max_bytes);

struct OverflowSpec {
  std::string name;  // "overflow staged" / "overflow journal"
  uint64_t journal_capacity = 0;
  double factor = 4;        // write at least factor x capacity ...
  double min_seconds = 6;   // ... and for at least this long ...
  double max_seconds = 90;  // ... but stop here regardless
  uint64_t ring_bytes = 0;  // objects rewritten in a ring of this many bytes
};

// Sequential 4 MiB write_full over a ring of objects at queue depth 4.
// Figures: mb_per_sec, second_half_mb_per_sec, min_window_mb_per_sec,
// journal_fill_peak_pct, throttle and checkpoint counts; per-second samples.
Result<WorkloadFigures> run_overflow(store::Store &store, const OverflowSpec &spec);

// Creates a workload's collection (a no-op if it exists).
Status ensure_collection(store::Store &store, const std::string &coll);

// Removes a workload's collection (and its objects) and checkpoints.
Status remove_collection(store::Store &store, const std::string &coll);

// LoadSpec::make for a workload writing whole objects of `size` bytes
// named prefix + i, or prefix + (i % ring) over a ring of `ring` objects
// (ring > 0); payload(i, size) as their bytes.
std::function<store::Transaction(uint64_t, uint64_t &)> write_full_objects(const std::string &coll,
                                                                           const char *prefix,
                                                                           uint64_t size,
                                                                           uint64_t ring = 0);

// Adds p50/p99/max of `latency_us` (which it sorts), divided by `scale`, as
// figures p50_<unit>, p99_<unit>, max_<unit>.
void add_latency(WorkloadFigures &w, std::vector<double> &latency_us, double scale,
                 const std::string &unit);

}  // namespace strata::store_bench
