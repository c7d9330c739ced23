// Runs each selected test case of a Catch2 session in a forked child.
//
// A plugin under test runs in the kit's own process, and a buggy one may
// crash it (SIGSEGV on a NULL it returned, an abort in its allocator).
// Catching the signal and carrying on in the same process would go on with
// whatever state the crash left (a held lock, a corrupted heap, a half-open
// store), so every case gets a fresh copy of the kit instead: a crash ends
// only that child, is reported as that case's failure naming the signal,
// and the next case runs. The caller prints the summary.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/json.h"

namespace strata::conformance {

enum class Outcome { kPassed, kFailed, kCrashed };

struct CaseResult {
  std::string name;
  Outcome outcome;
  std::string detail;  // the signal, for a crash; why it did not run
};

// Runs run_one(name) for each name in a forked child whose exit code is
// run_one's result (0: the case passed). Stops after abort_after cases that
// did not pass (<= 0: never). A line for each crash goes to `progress`.
// With children_to_stderr, what the children print (Catch2's report) goes
// to stderr, keeping stdout for a machine-readable summary.
std::vector<CaseResult> run_each_case_in_child(
    const std::vector<std::string> &names,
    const std::function<int(const std::string &name)> &run_one, int abort_after,
    std::FILE *progress, bool children_to_stderr);

size_t count_outcome(const std::vector<CaseResult> &results, Outcome o);

// "strata-conformance summary: ..." and one line per case that did not pass.
void print_text_summary(std::FILE *out, const std::vector<CaseResult> &results, size_t selected);

// The same as one JSON object: counts and every case with its outcome.
json::Value json_summary(const std::vector<CaseResult> &results, size_t selected);

// A test name as a Catch2 test spec matching exactly that name.
std::string exact_test_spec(const std::string &name);

}  // namespace strata::conformance
