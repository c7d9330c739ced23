// Submits a group-commit write through io_uring: every run's write and the
// flush go to the kernel in one submission, and the caller waits once for
// all their completions.
#pragma once

#include <liburing.h>

#include <memory>
#include <span>
#include <string>

#include "journal_log/media.h"

namespace strata::journal {

enum class SyncMode {
  kFdatasync,  // plain writes, then one fdatasync ordered after them
  kDsync,      // each write carries RWF_DSYNC; no separate flush
};

class UringSubmitter {
 public:
  // nullptr when the kernel refuses io_uring (old kernel, seccomp,
  // io_uring_disabled); *why then says what failed.
  static std::unique_ptr<UringSubmitter> create(unsigned entries, std::string *why);
  ~UringSubmitter();
  UringSubmitter(const UringSubmitter &) = delete;
  UringSubmitter &operator=(const UringSubmitter &) = delete;

  // Writes every run to `fd` and makes them durable as `mode` says; returns
  // when all completed. Short writes are finished with pwrite. Throws
  // sdk::Error naming `name` and the offset. Not thread-safe.
  void write_durable(int fd, std::span<const WriteRun> runs, SyncMode mode,
                     const std::string &name);

 private:
  explicit UringSubmitter(unsigned entries) : entries_(entries) {}
  void wait_for(size_t count, std::span<int> results, const std::string &name);

  io_uring ring_{};
  unsigned entries_;
};

}  // namespace strata::journal
