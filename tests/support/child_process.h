// Child processes for crash tests: the test binary runs itself again
// (fork + exec of /proc/self/exe, so the child starts with a clean process:
// no threads or library state inherited from the parent's stores) in a
// registered child mode. The child reports progress as 8-byte numbers on a
// pipe (fd 3 in the child); the parent reads them, and may SIGKILL the child
// at any moment.
//
//   STRATA_CHILD_MODE("writer", writer_main);   // in the test's sources
//   int writer_main(const std::vector<std::string> &args);  // exit code
//   ...
//   auto child = ChildProcess::spawn("writer", {"dir", "1"});
//
// Threading: a ChildProcess belongs to one thread. report() is thread-safe
// (one write(2) of 8 bytes is atomic on a pipe).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::testing {

using ChildMain = int (*)(const std::vector<std::string> &args);

struct ChildRegistrar {
  ChildRegistrar(const char *mode, ChildMain fn);
};

#define STRATA_CHILD_MODE_CAT2(a, b) a##b
#define STRATA_CHILD_MODE_CAT(a, b) STRATA_CHILD_MODE_CAT2(a, b)
#define STRATA_CHILD_MODE(mode, fn) \
  static ::strata::testing::ChildRegistrar STRATA_CHILD_MODE_CAT(strata_child_, __LINE__)(mode, fn)

// Called first thing by main: when argv is "--child MODE ARGS...", runs that
// mode and returns true with its exit code in *code.
bool run_child_mode(int argc, char **argv, int *code);

// In the child: sends one number to the parent. Exits the process (code 70)
// if the parent is gone.
void report(uint64_t value);

class ChildProcess {
 public:
  static Result<ChildProcess> spawn(const std::string &mode, const std::vector<std::string> &args);

  ChildProcess(ChildProcess &&o) noexcept;
  ChildProcess &operator=(ChildProcess &&o) = delete;
  ChildProcess(const ChildProcess &) = delete;
  // Kills (SIGKILL) and reaps the child if it is still running.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  enum class Read { kData, kTimeout, kEof };
  // Appends the numbers that arrive within timeout_ms (returns as soon as at
  // least one did) to out. kEof once the child closed its end (exited).
  Read read_reports(std::vector<uint64_t> &out, int timeout_ms);
  // Reads everything left until EOF (after the child died).
  void read_remaining(std::vector<uint64_t> &out);

  void kill9();
  // Waits for the child; returns the wait status.
  int wait();
  bool exited() const { return reaped_; }

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string partial_;
};

// "exited with 3", "killed by signal 9", ...
std::string describe_wait_status(int status);

}  // namespace strata::testing
