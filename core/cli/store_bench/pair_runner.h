// One backend x journal pair, start to finish: a fresh store in a
// subdirectory, the selected workloads next to their fio baselines, close,
// remove.
#pragma once

#include "cli/cli_context.h"
#include "cli/store_bench/bench_options.h"
#include "cli/store_bench/fio_baseline.h"
#include "cli/store_bench/report.h"

namespace strata::cli::bench {

// Never throws and never aborts the run: a pair that cannot run is
// reported as skipped or failed with the reason. `progress` lines (what is
// running now) go to stderr so that stdout stays a clean report.
PairReport run_pair(CliContext &ctx, const BenchOptions &opts, const PairSpec &pair,
                    FioBaseline &fio);

}  // namespace strata::cli::bench
