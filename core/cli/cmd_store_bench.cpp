// `strata store bench`: object-store figures for each backend x journal
// pair, printed next to fio baselines measured in the same run on the same
// file system, as ratios with the goals of issue 2. The machine is shared
// and noisy, so nothing here is an absolute pass/fail threshold: a missed
// goal is reported, and the exit code only says whether the runs worked.
//
// The bench itself is bench/store (library strata_store_bench); this file
// turns the command line into its options and the config into its stores.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "bench/store/bench_options.h"
#include "bench/store/fio_baseline.h"
#include "bench/store/fs_info.h"
#include "bench/store/pair_runner.h"
#include "bench/store/report.h"
#include "cli/cli_context.h"
#include "cli/commands.h"
#include "cli/store_options.h"
#include "common/config.h"

namespace po = boost::program_options;

namespace strata::cli {

namespace {

namespace bench = store_bench;
using bench::all_workloads;
using bench::BenchOptions;
using bench::Format;
using bench::PairSpec;

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

Status parse_pairs(const std::string &text, std::vector<PairSpec> &out) {
  for (const std::string &p : split(text, ',')) {
    size_t colon = p.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == p.size())
      return Status::Error(EINVAL, "--pairs: '" + p + "' is not BACKEND:JOURNAL (e.g. xfs:file)");
    out.push_back({p.substr(0, colon), p.substr(colon + 1)});
  }
  if (out.empty()) return Status::Error(EINVAL, "--pairs: no pair given");
  return Status::OK();
}

Status parse_workloads(const std::string &text, std::vector<std::string> &out) {
  std::vector<std::string> asked = split(text, ',');
  for (const std::string &w : asked)
    if (std::find(all_workloads().begin(), all_workloads().end(), w) == all_workloads().end())
      return Status::Error(EINVAL, "--workloads: unknown workload '" + w +
                                       "' (sync4k, qd32, creates, write4m, overflow)");
  // Run order is fixed (cheap, small-write workloads first), whatever the
  // order on the command line.
  for (const std::string &w : all_workloads())
    if (std::find(asked.begin(), asked.end(), w) != asked.end()) out.push_back(w);
  if (out.empty()) return Status::Error(EINVAL, "--workloads: none given");
  return Status::OK();
}

// Parses args into opts. Returns false with rc set when the caller should exit
// (rc 0 after --help, 2 on a usage error, already printed).
bool parse_bench_options(const std::vector<std::string> &args, BenchOptions &opts, int &rc) {
  po::options_description desc(
      "strata store bench: object-store figures and their ratios to fio baselines measured in\n"
      "the same run on the same file system, for each backend x journal pair. The report goes\n"
      "to stdout, progress to stderr. Exit code 0 unless a pair failed to run: a missed goal\n"
      "is reported, not fatal. Common options: --config FILE, --set key=value,\n"
      "--plugin-path DIRS, --log-level L");
  std::string backend, journal, pairs, workloads, jsize = "256M", format = "text";
  desc.add_options()("help,h", "this help")(
      "dir", po::value(&opts.dir), "directory for the stores and fio files (e.g. an XFS mount)")(
      "btrfs-dir", po::value(&opts.btrfs_dir), "directory on btrfs for btrfs pairs")(
      "backend", po::value(&backend), "one pair: backend (default xfs)")(
      "journal", po::value(&journal), "one pair: journal (default file)")(
      "pairs", po::value(&pairs), "BACKEND:JOURNAL,... e.g. xfs:file,xfs:tmpfs,kv:file")(
      "seconds", po::value(&opts.seconds)->default_value(3), "length of each timed workload")(
      "rounds", po::value(&opts.rounds)->default_value(3),
      "sync4k, qd32 and their fio baseline alternate in this many slices")(
      "journal-size", po::value(&jsize), "journal capacity of every store (default 256M)")(
      "workloads", po::value(&workloads),
      "comma list of sync4k,qd32,creates,write4m,overflow (default all)")(
      "format", po::value(&format), "text or json")("fio", po::value(&opts.fio),
                                                    "fio program (default: fio on PATH)")(
      "keep", po::bool_switch(&opts.keep), "keep the stores after the run")(
      "overflow-factor", po::value(&opts.overflow_factor)->default_value(4),
      "overflow writes this many times the journal capacity")(
      "overflow-max-seconds", po::value(&opts.overflow_max_seconds)->default_value(90),
      "overflow stops after this long even if short of the factor");
  po::variables_map vm;
  auto usage_error = [&](const std::string &msg) {
    std::fprintf(stderr, "strata store bench: %s\n", msg.c_str());
    rc = 2;
    return false;
  };
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const std::exception &e) {
    return usage_error(std::string(e.what()) + " (see --help)");
  }
  if (vm.count("help")) {
    std::cout << desc;
    rc = 0;
    return false;
  }
  if (opts.dir.empty()) return usage_error("--dir DIR is required");
  if (!(opts.seconds > 0)) return usage_error("--seconds must be > 0");
  if (opts.rounds < 1) return usage_error("--rounds must be >= 1");
  if (!(opts.overflow_factor > 0)) return usage_error("--overflow-factor must be > 0");
  auto size = parse_size(jsize);
  if (!size.ok() || *size <= 0)
    return usage_error("--journal-size: " +
                       (size.ok() ? std::string("must be > 0") : size.status().message()));
  opts.journal_size = static_cast<uint64_t>(*size);
  if (format == "json")
    opts.format = Format::kJson;
  else if (format != "text")
    return usage_error("--format must be text or json");

  if (!pairs.empty()) {
    if (!backend.empty() || !journal.empty())
      return usage_error("give either --pairs or --backend/--journal, not both");
    Status st = parse_pairs(pairs, opts.pairs);
    if (!st.ok()) return usage_error(st.message());
  } else {
    opts.pairs.push_back({backend.empty() ? "xfs" : backend, journal.empty() ? "file" : journal});
  }
  Status st = parse_workloads(
      workloads.empty() ? "sync4k,qd32,creates,write4m,overflow" : workloads, opts.workloads);
  if (!st.ok()) return usage_error(st.message());
  return true;
}

// The bench's stores are made the way `strata store mkfs` makes one: from
// the config and --set options, with the pair's backend and journal and the
// bench's journal size set over them.
bench::BenchContext bench_context(CliContext &ctx) {
  return {*ctx.plugins, ctx.log,
          [&ctx](const PairSpec &pair, uint64_t journal_size, const std::string &dir) {
            ctx.config.set("", "backend", pair.backend);
            ctx.config.set("", "journal", pair.journal);
            ctx.config.set("", "journal_size", std::to_string(journal_size));
            return mkfs_params_from_config(ctx, dir);
          },
          [&ctx](const std::string &dir) { return settings_from_config(ctx, dir); }};
}

}  // namespace

int cmd_store_bench(std::vector<std::string> args) {
  auto ctx = make_context(args);
  if (!ctx) return 1;
  bench::BenchOptions opts;
  int rc = 0;
  if (!parse_bench_options(args, opts, rc)) return rc;
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
  const bench::BenchContext bench_ctx = bench_context(*ctx);
  bool failed = false, any_ran = false;
  for (const bench::PairSpec &pair : opts.pairs) {
    bench::PairReport p = bench::run_pair(bench_ctx, opts, pair, fio);
    failed |= p.status == "failed";
    any_ran |= p.status != "skipped";
    if (text) {
      bench::print_pair_text(p);
      std::fflush(stdout);
    }
    run.pairs.push_back(std::move(p));
  }
  if (text)
    bench::print_summary_text(run);
  else
    bench::print_json(run);
  // Nothing measured is a failure too: e.g. no plugin on the plugin path.
  if (!any_ran) std::fprintf(stderr, "strata store bench: no pair could run\n");
  return failed || !any_ran ? 1 : 0;
}

}  // namespace strata::cli
