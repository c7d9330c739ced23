// Header-only C++ conveniences for writing Strata plugins. Not part of the
// ABI: everything here compiles into the plugin, and only the C structs of
// strata/plugin.h cross the boundary.
#pragma once

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "strata/plugin.h"

namespace strata::sdk {

// Throw this inside a plugin body to fail the current C call with `code`
// (a positive or negative errno) and `msg` as the error context.
class Error : public std::exception {
 public:
  Error(int code, std::string msg) : code_(code < 0 ? code : -code), msg_(std::move(msg)) {}
  int code() const noexcept { return code_; }
  const char *what() const noexcept override { return msg_.c_str(); }

 private:
  int code_;
  std::string msg_;
};

// printf-style construction of an Error with errno-style code.
[[gnu::format(printf, 2, 3)]] inline Error make_error(int code, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Error(code, buf);
}

inline void set_err(strata_err *err, const char *msg) {
  if (err) std::snprintf(err->msg, sizeof err->msg, "%s", msg);
}

// Runs f and converts every exception into a negative errno plus message,
// so that nothing escapes across the C boundary (STYLE.md, rule 3).
template <class F>
auto guard(strata_err *err, F &&f) noexcept -> decltype(f()) {
  try {
    return f();
  } catch (const Error &e) {
    set_err(err, e.what());
    return e.code();
  } catch (const std::bad_alloc &) {
    set_err(err, "out of memory");
    return -ENOMEM;
  } catch (const std::exception &e) {
    set_err(err, e.what());
    return -EIO;
  } catch (...) {
    set_err(err, "unknown exception in plugin");
    return -EIO;
  }
}

inline std::string_view view(strata_slice s) { return {s.data ? s.data : "", s.len}; }
inline strata_slice slice(std::string_view s) { return {s.data(), s.size()}; }

// Read access to the validated options and host services given at open.
class OpenArgs {
 public:
  explicit OpenArgs(const strata_open_args *a) : a_(a) {}

  std::string path() const { return a_->path ? a_->path : ""; }

  // The option's value (the host fills defaults, so a declared option is
  // always present); `fallback` only when the host omitted it.
  std::string option(std::string_view name, std::string_view fallback = {}) const {
    for (size_t i = 0; i < a_->n_options; ++i)
      if (name == a_->options[i].key) return a_->options[i].value;
    return std::string(fallback);
  }
  // Integer with optional K/M/G/T suffix (powers of 1024).
  long long option_int(std::string_view name, long long fallback) const {
    std::string v = option(name);
    if (v.empty()) return fallback;
    char *end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    switch (end && *end ? (*end | 0x20) : 0) {
      case 'k': n <<= 10; break;
      case 'm': n <<= 20; break;
      case 'g': n <<= 30; break;
      case 't': n <<= 40; break;
      default: break;
    }
    return n;
  }
  bool option_bool(std::string_view name, bool fallback) const {
    std::string v = option(name);
    if (v.empty()) return fallback;
    return v == "1" || v == "true" || v == "yes" || v == "on";
  }

  const strata_host_services *host() const { return a_->host; }

  // ABI 1.3: who the instance belongs to; "" when the host did not say.
  std::string owner_id() const { return a_->owner_id ? a_->owner_id : ""; }
  std::string owner_path() const { return a_->owner_path ? a_->owner_path : ""; }

 private:
  const strata_open_args *a_;
};

// Logging through the host; a plugin keeps a copy of the services pointer.
class Logger {
 public:
  Logger() = default;
  explicit Logger(const strata_host_services *h) : h_(h) {}
  [[gnu::format(printf, 3, 4)]] void log(int level, const char *fmt, ...) const {
    if (!h_ || !h_->log) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    h_->log(h_->ctx, level, buf);
  }

 private:
  const strata_host_services *h_ = nullptr;
};

namespace detail {

// The options a plugin declares: an array of specs, or none at all
// (nullptr, or nothing given to the plugin macros).
struct OptionTable {
  const strata_option_spec *specs = nullptr;
  size_t count = 0;
  constexpr OptionTable() = default;
  constexpr OptionTable(std::nullptr_t) {}
  template <size_t N>
  constexpr OptionTable(const strata_option_spec (&a)[N]) : specs(a), count(N) {}
  // A table kept elsewhere (a plugin whose options live with their parser).
  constexpr OptionTable(const strata_option_spec *a, size_t n) : specs(a), count(n) {}
};

// Calls a visitor by the convention of plugin.h and remembers a stop: the
// C++ visitors return true to go on, and the C function must return the
// callback's value once it stopped.
struct VisitStop {
  int value = 0;
  bool go_on(int rc) {
    value = rc;
    return rc == 0;
  }
};

}  // namespace detail
}  // namespace strata::sdk

// Defines the plugin's one exported symbol returning `descriptor_expr`
// (a `const strata_plugin_descriptor*`).
#define STRATA_DEFINE_PLUGIN_ENTRY(descriptor_expr)                                       \
  extern "C" STRATA_PLUGIN_EXPORT const strata_plugin_descriptor *strata_plugin_entry_v1( \
      void) {                                                                             \
    return (descriptor_expr);                                                             \
  }
