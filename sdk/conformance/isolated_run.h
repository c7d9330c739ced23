// Runs each selected test case of a Catch2 session in a forked child.
//
// A plugin under test runs in the kit's own process, and a buggy one may
// crash it (SIGSEGV on a NULL it returned, an abort in its allocator).
// Catching the signal and carrying on in the same process would go on with
// whatever state the crash left (a held lock, a corrupted heap, a half-open
// store), so every case gets a fresh copy of the kit instead: a crash ends
// only that child, is reported as that case's failure naming the signal,
// and the next case runs. The parent always prints a summary.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace strata::conformance {

// Runs run_one(name) for each name in a forked child whose exit code is
// run_one's result (0: the case passed). Stops after abort_after cases that
// did not pass (<= 0: never). Prints a line for each crash and a summary;
// returns the number of cases that failed or crashed (at most 255).
int run_each_case_in_child(const std::vector<std::string> &names,
                           const std::function<int(const std::string &name)> &run_one,
                           int abort_after);

// A test name as a Catch2 test spec matching exactly that name.
std::string exact_test_spec(const std::string &name);

}  // namespace strata::conformance
