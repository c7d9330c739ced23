// What a bench run found, per backend x journal pair, and how it is printed:
// a text report for people and a JSON object for scripts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/store/bench_options.h"

namespace strata::store_bench {

struct Figure {
  std::string key;   // "iops", "p99_us", ...
  double value = 0;
  std::string unit;  // "IOPS", "us", "MB/s" (10^6 bytes), ...
};

// One measured workload (or fio baseline) with its figures.
struct WorkloadFigures {
  std::string name;  // "sync4k", "fio sync4k", "overflow staged", ...
  std::vector<Figure> figures;
  std::vector<double> per_second_mb;  // throughput samples, when meaningful
  std::vector<std::string> notes;

  void add(const std::string &key, double value, const std::string &unit) {
    figures.push_back({key, value, unit});
  }
  const Figure *find(const std::string &key) const;
};

// store figure / baseline figure, with the goal issue 2 states for it.
struct Ratio {
  std::string name;    // "sync4k IOPS / fio"
  std::optional<double> value;
  std::optional<double> goal;  // none: informational
  bool binding = false;        // the issue states this goal for this pair
  std::string missing;         // why there is no value
  std::string note;            // e.g. a physical ceiling worth knowing
  std::string verdict() const; // "met", "MISSED", "n/a", "info"
};

struct PairReport {
  PairSpec pair;
  std::string dir;      // store directory used
  std::string fs_type;  // of the directory's file system
  std::string status = "ok";  // ok | skipped | failed
  std::string reason;         // for skipped / failed
  std::vector<WorkloadFigures> workloads;
  std::vector<Ratio> ratios;
  std::vector<std::string> warnings;

  const WorkloadFigures *find(const std::string &name) const;
  // figure `key` of workload `name`, if both were measured
  std::optional<double> value(const std::string &name, const std::string &key) const;
};

struct RunReport {
  double seconds = 0;
  uint64_t journal_size = 0;
  std::string fio_note;  // e.g. "fio not found: baseline skipped"
  std::vector<PairReport> pairs;
};

void print_pair_text(const PairReport &p);
void print_summary_text(const RunReport &r);
void print_json(const RunReport &r);

}  // namespace strata::store_bench
