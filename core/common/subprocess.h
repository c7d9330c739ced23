// Running a helper program (fio for `strata store bench`, losetup and
// btrfs for `strata up` and the bench's cleanup) and capturing what it
// prints.
//
// Threading: run_process blocks the calling thread until the program ends;
// both functions may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace strata {

struct ProcessOutput {
  int exit_code = 0;  // 128 + signal number if killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (searched on PATH) with argv, stdin from /dev/null, and
// collects stdout and stderr. Fails only if the program cannot be started.
Result<ProcessOutput> run_process(const std::vector<std::string> &argv);

// The full path of `program` if it is executable (as given when it contains
// a '/', else searched on PATH); "" if not found.
std::string find_program(const std::string &program);

}  // namespace strata
