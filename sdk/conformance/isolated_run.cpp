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

const char *outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kCrashed:
      return "crashed";
  }
  return "unknown";
}

CaseResult run_in_child(const std::function<int(const std::string &)> &run_one,
                        const std::string &name, bool to_stderr) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) return {name, Outcome::kFailed, std::string("cannot fork: ") + std::strerror(errno)};
  if (pid == 0) {
    if (to_stderr) ::dup2(STDERR_FILENO, STDOUT_FILENO);
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

std::vector<CaseResult> run_each_case_in_child(
    const std::vector<std::string> &names,
    const std::function<int(const std::string &name)> &run_one, int abort_after,
    std::FILE *progress, bool children_to_stderr) {
  std::vector<CaseResult> results;
  int bad = 0;
  for (const std::string &name : names) {
    CaseResult r = run_in_child(run_one, name, children_to_stderr);
    if (r.outcome == Outcome::kCrashed)
      std::fprintf(progress, "strata-conformance: test case '%s' crashed: %s\n", r.name.c_str(),
                   r.detail.c_str());
    else if (r.outcome == Outcome::kFailed && !r.detail.empty())
      std::fprintf(progress, "strata-conformance: test case '%s' did not run: %s\n", r.name.c_str(),
                   r.detail.c_str());
    if (r.outcome != Outcome::kPassed) ++bad;
    results.push_back(std::move(r));
    if (abort_after > 0 && bad >= abort_after) break;
  }
  std::fflush(progress);
  return results;
}

size_t count_outcome(const std::vector<CaseResult> &results, Outcome o) {
  return static_cast<size_t>(std::count_if(results.begin(), results.end(),
                                           [&](const CaseResult &r) { return r.outcome == o; }));
}

void print_text_summary(std::FILE *out, const std::vector<CaseResult> &results, size_t selected) {
  std::fprintf(out,
               "\nstrata-conformance summary: %zu of %zu test cases run: %zu passed, %zu failed, "
               "%zu crashed\n",
               results.size(), selected, count_outcome(results, Outcome::kPassed),
               count_outcome(results, Outcome::kFailed), count_outcome(results, Outcome::kCrashed));
  for (const CaseResult &r : results) {
    if (r.outcome == Outcome::kFailed) std::fprintf(out, "  FAILED   %s\n", r.name.c_str());
    if (r.outcome == Outcome::kCrashed)
      std::fprintf(out, "  CRASHED  %s: %s\n", r.name.c_str(), r.detail.c_str());
  }
  std::fflush(out);
}

json::Value json_summary(const std::vector<CaseResult> &results, size_t selected) {
  json::Array cases;
  for (const CaseResult &r : results) {
    json::Value c = json::Object{{"name", r.name}, {"outcome", outcome_name(r.outcome)}};
    if (!r.detail.empty()) c.set("detail", r.detail);
    cases.push_back(std::move(c));
  }
  return json::Object{{"selected", selected},
                      {"run", results.size()},
                      {"passed", count_outcome(results, Outcome::kPassed)},
                      {"failed", count_outcome(results, Outcome::kFailed)},
                      {"crashed", count_outcome(results, Outcome::kCrashed)},
                      {"cases", std::move(cases)}};
}

}  // namespace strata::conformance
