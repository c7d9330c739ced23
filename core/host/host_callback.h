// The host's side of a visitor handed to a plugin (plugin.h, "Visitors"
// and "Host callbacks"): the plugin calls a noexcept trampoline, never the
// host's own function. The trampoline
//   - keeps an exception the host's function throws on the host's side: it
//     stops the iteration, and finish() rethrows it once the plugin has
//     returned, so it unwinds host frames only (a C plugin's frames have no
//     unwind tables; a C++ plugin's guard would swallow it);
//   - remembers the value that stopped the iteration, so that finish()
//     returns it whatever the plugin's minor (before ABI 1.3 an object store
//     returned 0 for a stop).
#pragma once

#include <cerrno>
#include <exception>

namespace strata::host {

template <class... Args>
class Visit {
 public:
  using Fn = int (*)(void *ctx, Args...);

  Visit(Fn fn, void *ctx) : fn_(fn), ctx_(ctx) {}
  Visit(const Visit &) = delete;
  Visit &operator=(const Visit &) = delete;

  // What the plugin gets: call as the callback, this as its cookie.
  static int call(void *self, Args... args) noexcept {
    auto *v = static_cast<Visit *>(self);
    int rc;
    try {
      rc = v->fn_(v->ctx_, args...);
    } catch (...) {
      v->thrown_ = std::current_exception();
      rc = -ECANCELED;
    }
    if (rc != 0) v->stop_ = rc;
    return rc;
  }
  // For journal replay before ABI 1.3, which stops only on a negative
  // value: a positive stop reaches the plugin as -ECANCELED.
  static int call_abort_on_stop(void *self, Args... args) noexcept {
    int rc = call(self, args...);
    return rc > 0 ? -ECANCELED : rc;
  }
  void *cookie() { return this; }

  // The iterating call's result: rethrows what the host's function threw,
  // else the stop value, else the plugin's own result.
  int finish(int plugin_rc) const {
    if (thrown_) std::rethrow_exception(thrown_);
    return stop_ != 0 ? stop_ : plugin_rc;
  }

 private:
  Fn fn_;
  void *ctx_;
  int stop_ = 0;
  std::exception_ptr thrown_;
};

}  // namespace strata::host
