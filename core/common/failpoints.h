// Failpoints: named places in production code where a test can make the
// code fail on purpose (return an error, kill -9 the process, pause), so
// that fault-injection tests need no test-only branches or options of
// their own in the code they test.
//
// Production code asks at the place:
//
//   if (int rc = env.failpoints().hit("osd.write_durable_before_ack", oid)) ...
//
// which costs one relaxed atomic load while nothing is armed. Tests arm
// points through the daemon's Env (arm()), or, for a daemon running as a
// process, through the `failpoints` config key, one entry per point:
//
//   failpoints = NAME[@SUBJECT]=ACTION[*COUNT], ...
//
//   ACTION  error(E)  hit() returns -E (E: a number or EIO, ENOSPC, ...)
//           kill      the process kills itself with SIGKILL
//           pause(MS) hit() waits MS milliseconds on the Env's clock
//   @SUBJECT          fire only for hits naming this subject (an object)
//   *COUNT            fire for the first COUNT matching hits, then disarm
//
// Threading: thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace strata {

class FailPoints {
 public:
  enum class Action { kError, kKill, kPause };
  struct Spec {
    Action action = Action::kError;
    int error = 5;          // kError: the errno hit() returns negated (EIO)
    uint64_t pause_ms = 0;  // kPause
    std::string subject;    // empty: every hit
    uint64_t count = 0;     // 0: every matching hit; N: the first N
  };

  explicit FailPoints(Clock &clock) : clock_(clock) {}

  // Parses the `failpoints` config syntax (see above). Names not in `known`
  // are refused (a misspelt point would otherwise never fire).
  static Result<std::vector<std::pair<std::string, Spec>>> parse(
      const std::string &text, const std::vector<std::string> &known);
  // parse() and arm() every entry; nothing is armed on an error.
  Status arm_from(const std::string &text, const std::vector<std::string> &known);

  void arm(const std::string &name, Spec spec);
  void disarm(const std::string &name);
  // Called with a one-line description before a point acts (a daemon logs
  // it: after a kill nothing else would tell why the process died).
  void set_announce(std::function<void(const std::string &)> announce);

  // 0: carry on. Negative errno: fail with it. Does not return when the
  // point kills the process.
  int hit(std::string_view name, std::string_view subject = {}) {
    if (armed_.load(std::memory_order_relaxed) == 0) return 0;
    return hit_armed(name, subject);
  }
  // How often `name` has fired.
  uint64_t fired(std::string_view name) const;

 private:
  struct Point {
    Spec spec;
    uint64_t fired = 0;
    bool armed = false;
  };
  int hit_armed(std::string_view name, std::string_view subject);

  Clock &clock_;
  std::atomic<int> armed_{0};  // points armed; the fast path reads only this
  mutable std::mutex mu_;
  std::map<std::string, Point, std::less<>> points_;   // GUARDED_BY(mu_)
  std::function<void(const std::string &)> announce_;  // GUARDED_BY(mu_)
};

}  // namespace strata
