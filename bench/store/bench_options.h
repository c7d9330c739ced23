// What a `strata store bench` run measures: where, which backend x journal
// pairs, which workloads, for how long. The CLI fills it from the command
// line (core/cli/cmd_store_bench.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::store_bench {

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
  std::string fio = "fio";           // program name or path
  bool keep = false;                 // leave the stores behind for inspection
  double overflow_factor = 4;        // bytes written = factor x journal capacity
  double overflow_max_seconds = 90;  // give up on reaching the factor after this

  bool wants(const std::string &w) const {
    return std::find(workloads.begin(), workloads.end(), w) != workloads.end();
  }
};

}  // namespace strata::store_bench
