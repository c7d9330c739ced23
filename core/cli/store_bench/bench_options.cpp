#include "cli/store_bench/bench_options.h"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "common/config.h"

namespace po = boost::program_options;

namespace strata::cli::bench {

namespace {

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

}  // namespace

bool BenchOptions::wants(const std::string &w) const {
  return std::find(workloads.begin(), workloads.end(), w) != workloads.end();
}

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
      "format", po::value(&format), "text or json")(
      "fio", po::value(&opts.fio), "fio program (default: fio on PATH)")(
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
  if (format == "json") opts.format = Format::kJson;
  else if (format != "text") return usage_error("--format must be text or json");

  if (!pairs.empty()) {
    if (!backend.empty() || !journal.empty())
      return usage_error("give either --pairs or --backend/--journal, not both");
    Status st = parse_pairs(pairs, opts.pairs);
    if (!st.ok()) return usage_error(st.message());
  } else {
    opts.pairs.push_back({backend.empty() ? "xfs" : backend, journal.empty() ? "file" : journal});
  }
  Status st = parse_workloads(workloads.empty() ? "sync4k,qd32,creates,write4m,overflow" : workloads,
                              opts.workloads);
  if (!st.ok()) return usage_error(st.message());
  return true;
}

}  // namespace strata::cli::bench
