#include "bench/store/pair_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "bench/store/fs_info.h"
#include "bench/store/ratios.h"
#include "bench/store/remove_tree.h"
#include "bench/store/workloads.h"
#include "store/plugin_instances.h"
#include "store/store.h"

namespace strata::store_bench {

namespace {

constexpr double kMB = 1e6;

void progress(const PairReport &r, const std::string &what) {
  std::fprintf(stderr, "[bench %s] %s\n", r.pair.label().c_str(), what.c_str());
}

WorkloadFigures fio_figures(const std::string &name, const FioFigures &f) {
  WorkloadFigures w;
  w.name = name;
  w.add("iops", f.write_iops, "IOPS");
  w.add("mb_per_sec", f.write_bytes_per_sec / kMB, "MB/s");
  w.add("seconds", f.runtime_s, "s");
  w.notes.push_back(f.runs > 1 ? std::to_string(f.runs) + " slices of: " + f.command : f.command);
  return w;
}

// Removes fio's data file however the workload ends.
struct ScopedFile {
  std::string path;
  ~ScopedFile() { ::unlink(path.c_str()); }
};

// Why this pair cannot run here, or "" if it can; sets `base` to the
// directory its store goes in.
std::string unusable_reason(const BenchContext &ctx, const BenchOptions &o, const PairSpec &p,
                            std::string &base) {
  if (!ctx.plugins.find(STRATA_KIND_OBJECTSTORE, p.backend).ok())
    return "no backend plugin '" + p.backend + "' on the plugin path";
  if (p.journal != "none" && !ctx.plugins.find(STRATA_KIND_JOURNAL, p.journal).ok())
    return "no journal plugin '" + p.journal + "' on the plugin path";
  if (p.backend == "btrfs") {
    if (o.btrfs_dir.empty()) return "btrfs pairs need a directory on btrfs: pass --btrfs-dir DIR";
    std::string t = fs_type(o.btrfs_dir);
    if (t != "btrfs") return "--btrfs-dir " + o.btrfs_dir + " is on " + (t.empty() ? "?" : t) +
                             ", not btrfs";
    base = o.btrfs_dir;
  } else {
    base = o.dir;
  }
  return "";
}

// Runs the pair's store from mkfs to close; errors leave partial figures in
// r. Cleanup is the caller's.
class PairRun {
 public:
  PairRun(const BenchContext &ctx, const BenchOptions &o, FioBaseline &fio, PairReport &r,
          std::string base)
      : ctx_(ctx), o_(o), fio_(fio), r_(r), base_(std::move(base)) {}

  Status run();
  void cleanup();

 private:
  Status open(const store::StoreSettings &s);
  Status close();
  Status overwrites();
  void sequential_baseline();
  Status overflow(const std::string &name);
  void baseline_failed(const std::string &name, const Status &st);
  double overflow_min_seconds() const { return std::max(2.0, 2 * o_.seconds); }
  uint64_t ring_bytes() const {
    return std::max<uint64_t>(256ull << 20, 2 * o_.journal_size) / (4ull << 20) * (4ull << 20);
  }

  const BenchContext &ctx_;
  const BenchOptions &o_;
  FioBaseline &fio_;
  PairReport &r_;
  const std::string base_;  // the directory the store is made in
  store::StoreSettings settings_;
  std::unique_ptr<store::Store> store_;
  store::StoreMeta meta_;
  bool made_ = false;
};

Status PairRun::open(const store::StoreSettings &s) {
  auto st = store::Store::open(ctx_.plugins, r_.dir, s, ctx_.log);
  if (!st.ok()) return st.status();
  store_ = std::move(*st);
  meta_ = store_->meta();
  for (const std::string &w : store_->health_warnings())
    if (std::find(r_.warnings.begin(), r_.warnings.end(), w) == r_.warnings.end())
      r_.warnings.push_back(w);
  return Status::OK();
}

Status PairRun::close() {
  if (!store_) return Status::OK();
  Status st = store_->close();
  store_.reset();
  return st.Context("closing the store");
}

void PairRun::baseline_failed(const std::string &name, const Status &st) {
  WorkloadFigures w;
  w.name = name;
  w.notes.push_back(fio_.available() ? st.ToString() : fio_.unavailable_reason());
  r_.workloads.push_back(w);
  if (fio_.available()) r_.warnings.push_back(name + " baseline failed: " + st.ToString());
}

Status PairRun::overwrites() {
  OverwriteSet set;
  progress(r_, "writing " + std::to_string(set.objects) + " x 4 MiB overwrite targets");
  Status st = prepare_overwrites(*store_, set);
  if (!st.ok()) return st;
  const bool sync4k = o_.wants("sync4k"), qd32 = o_.wants("qd32");
  ScopedFile file{FioBaseline::data_file(base_)};
  Status fio_st = Status::Error(ENOENT, fio_.unavailable_reason());
  if (sync4k && fio_.available()) {
    progress(r_, "writing fio's " + std::to_string(set.bytes() >> 20) + " MiB file");
    fio_st = fio_.prepare_file(file.path, set.bytes());
  }
  // fio, depth 1 and depth 32 take turns in short slices, so that the
  // noise of a shared machine (other jobs' I/O, the host's cache flushes)
  // falls on all three alike instead of on whichever ran during a burst.
  const int rounds = std::max(1, o_.rounds);
  const double slice = o_.seconds / rounds;
  progress(r_, std::string(sync4k ? "fio sync4k, sync4k (qd1)" : "") +
                   (sync4k && qd32 ? " and " : "") + (qd32 ? "qd32" : "") + ", " +
                   std::to_string(rounds) + " interleaved rounds");
  FioFigures fio_total;
  OverwriteTotals qd1_total, qd32_total;
  qd32_total.depth = 32;
  for (int round = 0; round < rounds; ++round) {
    if (sync4k) {
      if (fio_st.ok()) {
        auto f = fio_.sync_random_4k(file.path, set.bytes(), slice);
        if (f.ok()) fio_total.accumulate(*f);
        else fio_st = f.status();
      }
      if (st = overwrite_slice(*store_, set, slice, qd1_total); !st.ok()) return st;
    }
    if (qd32)
      if (st = overwrite_slice(*store_, set, slice, qd32_total); !st.ok()) return st;
  }
  if (sync4k) {
    if (fio_st.ok()) r_.workloads.push_back(fio_figures("fio sync4k", fio_total));
    else baseline_failed("fio sync4k", fio_st);
    r_.workloads.push_back(summarize_overwrites("sync4k", qd1_total));
  }
  if (qd32) r_.workloads.push_back(summarize_overwrites("qd32", qd32_total));
  return remove_collection(*store_, set.coll);
}

void PairRun::sequential_baseline() {
  double secs = o_.wants("overflow") ? overflow_min_seconds() : o_.seconds;
  progress(r_, "fio sequential 4M baselines (O_DIRECT, O_DIRECT+fdatasync, buffered)");
  ScopedFile file{FioBaseline::data_file(base_)};
  auto f = fio_.sequential_4m(file.path, ring_bytes(), secs);
  if (f.ok()) r_.workloads.push_back(fio_figures("fio seq4m", *f));
  else baseline_failed("fio seq4m", f.status());
  if (!fio_.available()) return;
  auto d = fio_.sequential_4m_durable(base_, ring_bytes(), secs);
  if (d.ok()) r_.workloads.push_back(fio_figures("fio seq4m durable", *d));
  else baseline_failed("fio seq4m durable", d.status());
  ::unlink(file.path.c_str());  // start the buffered run from a fresh file too
  auto b = fio_.sequential_4m_buffered(file.path, ring_bytes(), secs);
  if (b.ok()) r_.workloads.push_back(fio_figures("fio seq4m buffered", *b));
  else baseline_failed("fio seq4m buffered", b.status());
}

Status PairRun::overflow(const std::string &name) {
  OverflowSpec spec;
  spec.name = name;
  spec.journal_capacity = meta_.journal_size;
  if (store_->stats().has_journal && store_->stats().journal.capacity_bytes)
    spec.journal_capacity = store_->stats().journal.capacity_bytes;
  spec.factor = o_.overflow_factor;
  spec.min_seconds = overflow_min_seconds();
  spec.max_seconds = std::max(o_.overflow_max_seconds, spec.min_seconds);
  spec.ring_bytes = ring_bytes();
  progress(r_, name);
  auto w = run_overflow(*store_, spec);
  if (!w.ok()) return w.status();
  if (const Figure *f = w->find("staged_writes"); f && f->value == 0 && settings_.stage_threshold)
    if (name == "overflow staged")
      w->notes.push_back("nothing was staged (the backend has no staged writes): "
                         "every byte went through the journal");
  r_.workloads.push_back(*w);
  return remove_collection(*store_, "bench.overflow");
}

Status PairRun::run() {
  auto params = ctx_.mkfs_params(r_.pair, o_.journal_size, r_.dir);
  if (!params.ok()) return params.status();
  progress(r_, "mkfs in " + r_.dir);
  made_ = true;
  Status st = store::Store::mkfs(ctx_.plugins, *params, ctx_.log);
  if (!st.ok()) return st.Context("mkfs");
  if (auto m = store::StoreMeta::load(r_.dir); m.ok()) meta_ = *m;
  auto s = ctx_.settings(r_.dir);
  if (!s.ok()) return s.status();
  settings_ = *s;
  if (st = open(settings_); !st.ok()) return st;

  if (o_.wants("sync4k") || o_.wants("qd32"))
    if (st = overwrites(); !st.ok()) return st;
  if (o_.wants("creates")) {
    progress(r_, "creates");
    auto w = run_creates(*store_, o_.seconds);
    if (!w.ok()) return w.status();
    r_.workloads.push_back(*w);
    if (st = remove_collection(*store_, "bench.creates"); !st.ok()) return st;
  }
  if (o_.wants("write4m") || o_.wants("overflow")) sequential_baseline();
  if (o_.wants("write4m")) {
    progress(r_, "write4m");
    auto w = run_write4m(*store_, o_.seconds, free_bytes(base_) / 4);
    if (!w.ok()) return w.status();
    r_.workloads.push_back(*w);
    if (st = remove_collection(*store_, "bench.write4m"); !st.ok()) return st;
  }
  if (o_.wants("overflow")) {
    if (st = overflow("overflow staged"); !st.ok()) return st;
    // Again with every byte through the journal: the path a store takes for
    // partial-object writes and for backends without staged writes.
    if (st = close(); !st.ok()) return st;
    store::StoreSettings all_journal = settings_;
    all_journal.stage_threshold = 0;
    if (st = open(all_journal); !st.ok()) return st;
    if (st = overflow("overflow journal"); !st.ok()) return st;
  }
  return close();
}

void PairRun::cleanup() {
  if (store_) {
    Status st = close();
    if (!st.ok()) r_.warnings.push_back(st.ToString());
  }
  if (!made_ || o_.keep) return;
  // A journal outside the store directory (tmpfs in /dev/shm) is removed by
  // its plugin, which knows what files it made.
  const std::string journal_at = meta_.journal_location(r_.dir);
  if (!journal_at.empty() && meta_.journal != "none" && journal_at.rfind(r_.dir + "/", 0) != 0) {
    auto jp = ctx_.plugins.find(STRATA_KIND_JOURNAL, meta_.journal);
    Status st = jp.ok() ? store::JournalInstance::destroy(*jp, journal_at, meta_.journal_options,
                                                          ctx_.log)
                        : jp.status();
    if (!st.ok()) r_.warnings.push_back("journal left at " + journal_at + ": " + st.ToString());
  }
  Status st = remove_tree(r_.dir);
  if (!st.ok()) r_.warnings.push_back("store left behind: " + st.ToString());
}

}  // namespace

PairReport run_pair(const BenchContext &ctx, const BenchOptions &opts, const PairSpec &pair,
                    FioBaseline &fio) {
  PairReport r;
  r.pair = pair;
  std::string base;
  std::string why = unusable_reason(ctx, opts, pair, base);
  if (!why.empty()) {
    r.status = "skipped";
    r.reason = why;
    progress(r, "skipped: " + why);
    return r;
  }
  r.fs_type = fs_type(base);
  if (pair.backend == "xfs" && r.fs_type != "xfs")
    r.warnings.push_back("--dir is on " + r.fs_type + ", not XFS: these are not the xfs design's figures");
  r.dir = base + "/strata-bench-" + pair.backend + "-" + pair.journal + "-" +
          std::to_string(::getpid());
  PairRun run(ctx, opts, fio, r, base);
  Status st;
  try {
    st = run.run();
  } catch (const std::exception &e) {  // e.g. bad_alloc: report, keep going
    st = Status::Error(EIO, std::string("unexpected exception: ") + e.what());
  }
  run.cleanup();
  if (!st.ok()) {
    r.status = "failed";
    r.reason = st.ToString();
    progress(r, "failed: " + r.reason);
  }
  r.ratios = compute_ratios(r);
  return r;
}

}  // namespace strata::store_bench
