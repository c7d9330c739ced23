// CallFailed: what a failing plugin call looks like in a
// Catch2 report.
#include <cstring>
#include <string>

#include "kit.h"

namespace strata::conformance {

namespace {
std::string describe(const std::string &call, int64_t code, const strata_err &err) {
  std::string what = call + " failed with " + describe_rc(code);
  // The plugin may not have written anything: err was zeroed by the caller.
  size_t len = strnlen(err.msg, sizeof err.msg);
  if (len > 0) what += ": " + std::string(err.msg, len);
  return what;
}
}  // namespace

CallFailed::CallFailed(const std::string &call, int64_t code, const strata_err &err)
    : std::runtime_error(describe(call, code, err)), code_(code) {}

}  // namespace strata::conformance
