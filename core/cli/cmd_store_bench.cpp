// `strata store bench`: object-store figures for each backend x journal
// pair, printed next to fio baselines measured in the same run on the same
// file system, as ratios with the goals of issue 2. The machine is shared
// and noisy, so nothing here is an absolute pass/fail threshold: a missed
// goal is reported, and the exit code only says whether the runs worked.
#include <cstdio>
#include <filesystem>

#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/store_bench/bench_options.h"
#include "cli/store_bench/fio_baseline.h"
#include "cli/store_bench/fs_info.h"
#include "cli/store_bench/pair_runner.h"
#include "cli/store_bench/report.h"

namespace strata::cli {

int cmd_store_bench(std::vector<std::string> args) {
  auto ctx = make_context(args);
  if (!ctx) return 1;
  bench::BenchOptions opts;
  int rc = 0;
  if (!bench::parse_bench_options(args, opts, rc)) return rc;
  std::error_code ec;
  if (!std::filesystem::is_directory(opts.dir, ec))
    return report(Status::Error(ENOTDIR, "--dir " + opts.dir + " is not a directory"));

  bench::FioBaseline fio(opts.fio);
  bench::RunReport run;
  run.seconds = opts.seconds;
  run.journal_size = opts.journal_size;
  if (!fio.available()) {
    run.fio_note = fio.unavailable_reason();
    std::fprintf(stderr, "%s\n", run.fio_note.c_str());
  }
  const bool text = opts.format == bench::Format::kText;
  if (text) {
    std::printf("strata store bench: --dir %s (%s), %.0f s per workload, journal %llu MiB\n",
                opts.dir.c_str(), bench::fs_type(opts.dir).c_str(), opts.seconds,
                static_cast<unsigned long long>(opts.journal_size >> 20));
    std::fflush(stdout);
  }
  bool failed = false, any_ran = false;
  for (const bench::PairSpec &pair : opts.pairs) {
    bench::PairReport p = bench::run_pair(*ctx, opts, pair, fio);
    failed |= p.status == "failed";
    any_ran |= p.status != "skipped";
    if (text) {
      bench::print_pair_text(p);
      std::fflush(stdout);
    }
    run.pairs.push_back(std::move(p));
  }
  if (text) bench::print_summary_text(run);
  else bench::print_json(run);
  // Nothing measured is a failure too: e.g. no plugin on the plugin path.
  if (!any_ran) std::fprintf(stderr, "strata store bench: no pair could run\n");
  return failed || !any_ran ? 1 : 0;
}

}  // namespace strata::cli
