#include "bench/store/workloads.h"

#include "bench/store/load_generator.h"
#include "bench/store/payload.h"
#include "bench/store/stats.h"

namespace strata::store_bench {

Status ensure_collection(store::Store &store, const std::string &coll) {
  store::Transaction t;
  t.mkcoll(coll);
  return store.submit(std::move(t)).Context("creating collection " + coll);
}

std::function<store::Transaction(uint64_t, uint64_t &)> write_full_objects(const std::string &coll,
                                                                           const char *prefix,
                                                                           uint64_t size,
                                                                           uint64_t ring) {
  return [coll, prefix, size, ring](uint64_t i, uint64_t &bytes) {
    store::Transaction t;
    t.write_full(coll, object_name(prefix, ring ? i % ring : i), payload(i, size));
    bytes = size;
    return t;
  };
}

void add_latency(WorkloadFigures &w, std::vector<double> &latency_us, double scale,
                 const std::string &unit) {
  w.add("p50_" + unit, percentile(latency_us, 0.50) / scale, unit);
  w.add("p99_" + unit, percentile(latency_us, 0.99) / scale, unit);
  w.add("max_" + unit, percentile(latency_us, 1.0) / scale, unit);
}

Status prepare_overwrites(store::Store &store, const OverwriteSet &set) {
  Status st = ensure_collection(store, set.coll);
  if (!st.ok()) return st;
  for (int i = 0; i < set.objects; ++i) {
    store::Transaction t;
    t.write_full(set.coll, object_name("obj.", i), payload(i, set.object_size));
    st = store.queue(std::move(t), nullptr);
    if (!st.ok()) return st.Context("writing overwrite target " + std::to_string(i));
  }
  store.drain();
  return store.checkpoint_now().Context("checkpoint after writing the overwrite targets");
}

Status overwrite_slice(store::Store &store, const OverwriteSet &set, double seconds,
                       OverwriteTotals &totals) {
  Status st = store.checkpoint_now();
  if (!st.ok()) return st;
  store::StoreStats before = store.stats();
  // Offsets differ per slice and depth but repeat across runs; a hash of
  // the index rather than a generator's state, as make() runs on several
  // submitting threads.
  const uint64_t seed = mix(totals.depth * 1000003ull + totals.ops);
  const uint64_t blocks = set.object_size / k4K;
  LoadSpec spec;
  spec.depth = totals.depth;
  spec.min_seconds = spec.max_seconds = seconds;
  spec.make = [&](uint64_t i, uint64_t &bytes) {
    store::Transaction t;
    uint64_t h = mix(seed + i);
    uint64_t obj = h % set.objects;
    uint64_t off = ((h >> 16) % blocks) * k4K;
    t.write(set.coll, object_name("obj.", obj), off, payload(i, k4K));
    bytes = k4K;
    return t;
  };
  auto r = run_closed_loop(store, spec);
  if (!r.ok())
    return r.status().Context("4 KiB overwrites at depth " + std::to_string(totals.depth));
  store::StoreStats after = store.stats();
  totals.ops += r->ops;
  totals.seconds += r->seconds;
  totals.latency_us.insert(totals.latency_us.end(), r->latency_us.begin(), r->latency_us.end());
  totals.has_journal = after.has_journal;
  if (after.has_journal) {
    totals.device_writes += after.journal.device_writes - before.journal.device_writes;
    totals.records += after.journal.records_written - before.journal.records_written;
  }
  return Status::OK();
}

WorkloadFigures summarize_overwrites(const std::string &name_, OverwriteTotals &t) {
  WorkloadFigures w;
  w.name = name_;
  w.add("iops", t.seconds > 0 ? t.ops / t.seconds : 0, "IOPS");
  add_latency(w, t.latency_us, 1.0, "us");
  w.add("ops", static_cast<double>(t.ops), "");
  w.add("seconds", t.seconds, "s");
  w.add("depth", t.depth, "");
  if (t.has_journal) {
    w.add("journal_device_writes", static_cast<double>(t.device_writes), "");
    w.add("journal_records", static_cast<double>(t.records), "");
    if (t.device_writes)
      w.add("records_per_device_write", static_cast<double>(t.records) / t.device_writes, "");
  }
  return w;
}

Result<WorkloadFigures> run_creates(store::Store &store, double seconds) {
  const std::string coll = "bench.creates";
  Status st = ensure_collection(store, coll);
  if (st.ok()) st = store.checkpoint_now();
  if (!st.ok()) return st;
  LoadSpec spec;
  spec.depth = 16;
  spec.min_seconds = spec.max_seconds = seconds;
  spec.make = write_full_objects(coll, "c.", k4K);
  auto r = run_closed_loop(store, spec);
  if (!r.ok()) return r.status().Context("creates");
  WorkloadFigures w;
  w.name = "creates";
  w.add("creates_per_sec", r->ops_per_sec(), "creates/s");
  add_latency(w, r->latency_us, 1.0, "us");
  w.add("ops", static_cast<double>(r->ops), "");
  w.add("seconds", r->seconds, "s");
  return w;
}

Result<WorkloadFigures> run_write4m(store::Store &store, double seconds, uint64_t max_bytes) {
  const std::string coll = "bench.write4m";
  Status st = ensure_collection(store, coll);
  if (st.ok()) st = store.checkpoint_now();
  if (!st.ok()) return st;
  store::StoreStats before = store.stats();
  LoadSpec spec;
  spec.depth = 4;
  spec.min_seconds = 0;
  spec.max_seconds = seconds;
  spec.target_bytes = std::max(max_bytes, 16 * k4M);
  spec.make = write_full_objects(coll, "w.", k4M);
  auto r = run_closed_loop(store, spec);
  if (!r.ok()) return r.status().Context("write4m");
  store::StoreStats after = store.stats();
  WorkloadFigures w;
  w.name = "write4m";
  w.add("mb_per_sec", r->bytes_per_sec() / kMB, "MB/s");
  add_latency(w, r->latency_us, 1000.0, "ms");
  w.add("ops", static_cast<double>(r->ops), "");
  w.add("seconds", r->seconds, "s");
  w.add("written", static_cast<double>(r->bytes) / (1 << 20), "MiB");
  w.add("staged_writes", static_cast<double>(after.staged_writes - before.staged_writes), "");
  if (r->bytes >= spec.target_bytes)
    w.notes.push_back("stopped early at a quarter of the file system's free space");
  return w;
}

Status remove_collection(store::Store &store, const std::string &coll) {
  store::Transaction t;
  t.rmcoll(coll);
  Status st = store.submit(std::move(t));
  if (st.ok()) st = store.checkpoint_now();
  return st.Context("removing collection " + coll);
}

}  // namespace strata::store_bench
