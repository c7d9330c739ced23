// The local-disk baselines the bench compares the store with, measured by
// fio on the same file system in the same run (the machine is shared and
// noisy, so only ratios measured side by side mean anything).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::store_bench {

struct FioFigures {
  double write_iops = 0;
  double write_bytes_per_sec = 0;
  double runtime_s = 0;
  std::string command;  // what ran, for the report
  int runs = 0;         // how many runs were accumulated into this

  // Folds another run of the same job into this one (time-weighted).
  void accumulate(const FioFigures &other);
};

class FioBaseline {
 public:
  // `program`: "fio" (searched on PATH) or a path.
  explicit FioBaseline(const std::string &program);

  bool available() const { return !path_.empty(); }
  // Why there is no baseline, e.g. "fio not found: baseline skipped".
  const std::string &unavailable_reason() const { return reason_; }

  // The data file fio works on in `dir`; callers remove it when done.
  static std::string data_file(const std::string &dir);

  // Writes `size` bytes to `file` (O_DIRECT, synced): the store's overwrite
  // targets are written before the overwrites start, so both sides
  // overwrite allocated blocks and neither pays for block allocation or
  // unwritten-extent conversion in its figure.
  Status prepare_file(const std::string &file, uint64_t size);

  // 4 KiB random overwrites of a prepared file, O_DIRECT plus fdatasync
  // after every write, queue depth 1, for `seconds`: what the store's
  // sync4k workload does (each transaction durable before the next), minus
  // the store.
  Result<FioFigures> sync_random_4k(const std::string &file, uint64_t size, double seconds);

  // Sequential 4 MiB O_DIRECT writes at queue depth 4 (libaio) for
  // `seconds`, wrapping over a file of `size` bytes, fsync at the end.
  Result<FioFigures> sequential_4m(const std::string &file, uint64_t size, double seconds);

  // Sequential 4 MiB O_DIRECT writes, each followed by fdatasync, from 4
  // jobs (the store's depth), each wrapping over its own file of size/4 in
  // `dir`: the disk's sequential rate when every write is durable before it
  // is acknowledged, which is what the store promises. This is the goal's
  // baseline for the overflow workload; sequential_4m (no per-write sync) is
  // printed beside it as the raw streaming rate.
  Result<FioFigures> sequential_4m_durable(const std::string &dir, uint64_t size, double seconds);

  // The same through the page cache (psync, one fsync at the end): how fast
  // the file system absorbs buffered writes, the path a backend that writes
  // object files without O_DIRECT takes. Informational: it tells how much
  // of a gap to the O_DIRECT figure is the buffered-write path itself.
  Result<FioFigures> sequential_4m_buffered(const std::string &file, uint64_t size,
                                            double seconds);

 private:
  Result<FioFigures> run(const std::vector<std::string> &job_args);
  std::string path_;
  std::string reason_;
};

// Extracts jobs[0].write.{iops,bw_bytes} and the job runtime from fio's
// --output-format=json text (tolerating lines fio prints before the JSON).
Result<FioFigures> parse_fio_json(const std::string &text);

}  // namespace strata::store_bench
