// The kit's exit statuses (documented in kUsage and README.md). Scripts
// and CI tell a plugin that would not load from one that loaded and failed.
#pragma once

namespace strata::conformance {

enum ExitCode : int {
  kExitPassed = 0,         // every selected case passed (or --help, --version, listing)
  kExitCasesFailed = 1,    // the plugin loaded; at least one case failed or crashed
  kExitUsageError = 2,     // the command line is wrong, or selects no test
  kExitPluginRefused = 3,  // the plugin would not load, or its options were refused
};

}  // namespace strata::conformance
