#include "isolated_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace strata::conformance {

std::string exact_test_spec(const std::string &name) {
  std::string out;
  for (char c : name) {
    if (c == '\\' || c == ',' || c == '[' || c == ']' || c == '"' || c == '*') out += '\\';
    out += c;
  }
  return out;
}

namespace {

enum class Outcome { kPassed, kFailed, kCrashed };

struct CaseResult {
  std::string name;
  Outcome outcome;
  std::string detail;  // the signal, for a crash
};

CaseResult run_in_child(const std::function<int(const std::string &)> &run_one,
                        const std::string &name) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) return {name, Outcome::kFailed, std::string("cannot fork: ") + std::strerror(errno)};
  if (pid == 0) {
    int failed = run_one(name);
    std::fflush(stdout);
    std::fflush(stderr);
    // _exit: the parent owns the scratch directory and every other
    // at-exit duty.
    ::_exit(failed == 0 ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return {name, Outcome::kFailed, std::string("waitpid: ") + std::strerror(errno)};
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *what = strsignal(sig);
    return {name, Outcome::kCrashed,
            std::string(what ? what : "signal") + " (signal " + std::to_string(sig) + ")"};
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {name, Outcome::kPassed, ""};
  return {name, Outcome::kFailed, ""};
}

}  // namespace

int run_each_case_in_child(const std::vector<std::string> &names,
                           const std::function<int(const std::string &name)> &run_one,
                           int abort_after) {
  std::vector<CaseResult> results;
  int bad = 0;
  for (const std::string &name : names) {
    CaseResult r = run_in_child(run_one, name);
    if (r.outcome == Outcome::kCrashed)
      std::printf("strata-conformance: test case '%s' crashed: %s\n", r.name.c_str(),
                  r.detail.c_str());
    else if (r.outcome == Outcome::kFailed && !r.detail.empty())
      std::printf("strata-conformance: test case '%s' did not run: %s\n", r.name.c_str(),
                  r.detail.c_str());
    if (r.outcome != Outcome::kPassed) ++bad;
    results.push_back(std::move(r));
    if (abort_after > 0 && bad >= abort_after) break;
  }

  auto count = [&](Outcome o) {
    return std::count_if(results.begin(), results.end(),
                         [&](const CaseResult &r) { return r.outcome == o; });
  };
  std::printf(
      "\nstrata-conformance summary: %zu of %zu test cases run: %zd passed, %zd failed, "
      "%zd crashed\n",
      results.size(), names.size(), count(Outcome::kPassed), count(Outcome::kFailed),
      count(Outcome::kCrashed));
  for (const CaseResult &r : results) {
    if (r.outcome == Outcome::kFailed) std::printf("  FAILED   %s\n", r.name.c_str());
    if (r.outcome == Outcome::kCrashed)
      std::printf("  CRASHED  %s: %s\n", r.name.c_str(), r.detail.c_str());
  }
  std::fflush(stdout);
  return std::min(bad, 255);
}

}  // namespace strata::conformance
