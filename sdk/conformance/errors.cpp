// CallFailed and errno names: what a failing plugin call looks like in a
// Catch2 report.
#include <cstring>
#include <string>

#include "kit.h"

namespace strata::conformance {

std::string errno_name(int64_t code) {
  int64_t positive = code < 0 ? -code : code;
  if (positive > 0 && positive < 4096)
    if (const char *name = strerrorname_np(static_cast<int>(positive))) return name;
  return std::to_string(code);
}

namespace {
std::string describe(const std::string &call, int64_t code, const strata_err &err) {
  std::string what = call + " failed with " + errno_name(code);
  // The plugin may not have written anything: err was zeroed by the caller.
  size_t len = strnlen(err.msg, sizeof err.msg);
  if (len > 0) what += ": " + std::string(err.msg, len);
  return what;
}
}  // namespace

CallFailed::CallFailed(const std::string &call, int64_t code, const strata_err &err)
    : std::runtime_error(describe(call, code, err)), code_(code) {}

}  // namespace strata::conformance
