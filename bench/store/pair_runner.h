// One backend x journal pair, start to finish: a fresh store in a
// subdirectory, the selected workloads next to their fio baselines, close,
// remove.
//
// Threading: run_pair runs on the caller's thread (the workloads start and
// join their own threads); one pair at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "bench/store/bench_options.h"
#include "bench/store/fio_baseline.h"
#include "bench/store/report.h"
#include "common/log.h"
#include "common/status.h"
#include "host/plugin_loader.h"
#include "store/store.h"

namespace strata::store_bench {

// Where a pair's store comes from: the plugins, the logger, and how its
// mkfs parameters and settings are made. The CLI answers from its config
// file and --set options, as `strata store mkfs` and `strata store` do.
struct BenchContext {
  const host::PluginRegistry &plugins;
  Logger &log;
  // The mkfs parameters of a store for `pair` in `dir` whose journal holds
  // `journal_size` bytes.
  std::function<Result<store::MkfsParams>(const PairSpec &pair, uint64_t journal_size,
                                          const std::string &dir)>
      mkfs_params;
  // The settings to open the store made in `dir` with.
  std::function<Result<store::StoreSettings>(const std::string &dir)> settings;
};

// Never throws and never aborts the run: a pair that cannot run is
// reported as skipped or failed with the reason. `progress` lines (what is
// running now) go to stderr so that stdout stays a clean report.
PairReport run_pair(const BenchContext &ctx, const BenchOptions &opts, const PairSpec &pair,
                    FioBaseline &fio);

}  // namespace strata::store_bench
