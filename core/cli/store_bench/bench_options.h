// The options of `strata store bench`, parsed from the command line (after
// make_context has stripped --config/--set/--plugin-path/--log-level).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::cli::bench {

struct PairSpec {
  std::string backend;
  std::string journal;
  std::string label() const { return backend + "+" + journal; }
};

enum class Format { kText, kJson };

// Workload names, in the order they run.
inline const std::vector<std::string> &all_workloads() {
  static const std::vector<std::string> w = {"sync4k", "qd32", "creates", "write4m", "overflow"};
  return w;
}

struct BenchOptions {
  std::string dir;        // where stores (and fio's files) are made
  std::string btrfs_dir;  // the same for btrfs pairs; "" = skip them
  std::vector<PairSpec> pairs;
  std::vector<std::string> workloads;  // subset of all_workloads(), in run order
  double seconds = 3;                  // per timed workload
  int rounds = 3;                      // interleaved slices of sync4k/qd32/fio
  uint64_t journal_size = 256ull << 20;
  Format format = Format::kText;
  std::string fio = "fio";  // program name or path
  bool keep = false;        // leave the stores behind for inspection
  double overflow_factor = 4;        // bytes written = factor x journal capacity
  double overflow_max_seconds = 90;  // give up on reaching the factor after this

  bool wants(const std::string &w) const;
};

// Parses args into opts. Returns false with rc set when the caller should exit
// (rc 0 after --help, 2 on a usage error, already printed).
bool parse_bench_options(const std::vector<std::string> &args, BenchOptions &opts, int &rc);

}  // namespace strata::cli::bench
