// Write a frontend plugin (strata/frontend.h) as a C++ class and export it
// with one macro:
//
//   class MyFrontend {
//    public:
//     // Starts serving (threads, sockets, mounts); throws strata::sdk::Error
//     // with nothing left running when it cannot.
//     static std::unique_ptr<MyFrontend> start(const strata_frontend_host *host,
//                                              strata_cluster_t cluster,
//                                              const strata::sdk::FrontendOptions &options);
//     // Stops serving and joins every thread: 0, or a negative errno with
//     // *why when something could not be finished cleanly. The instance is
//     // deleted right after, whatever it returns.
//     int stop(std::string *why);
//     std::string status_line() const;  // one line, no newline
//     std::string status_json() const;  // one JSON object
//     std::string metrics() const;      // Prometheus text, names strata_<plugin>_*
//   };
//   STRATA_FRONTEND_PLUGIN(MyFrontend, "mine", "0.1.0", "one line", kOptions)
//
// The adapter wraps every entry so that no exception crosses into the host,
// and does the buffer convention of status and metrics (copy what fits,
// return the full length). std::invalid_argument from start is EINVAL.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend.h"

namespace strata::sdk {

// A number with an optional K, M, G or T suffix (powers of 1024), as the
// host validated a STRATA_OPT_INT; std::invalid_argument naming `key`
// when it is not one.
inline uint64_t parse_option_number(const std::string &key, const std::string &v) {
  char *end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (end == v.c_str()) throw std::invalid_argument(key + ": '" + v + "' is not a number");
  switch (*end | 0x20) {
    case 'k':
      return n << 10;
    case 'm':
      return n << 20;
    case 'g':
      return n << 30;
    case 't':
      return n << 40;
    default:
      return n;
  }
}

// A STRATA_OPT_BOOL as the host validated it.
inline bool parse_option_flag(const std::string &v) {
  return v == "true" || v == "1" || v == "yes" || v == "on";
}

// The options start() got: every declared one, validated, defaults filled
// in, in the descriptor's order.
class FrontendOptions {
 public:
  explicit FrontendOptions(const strata_frontend_args *a) {
    for (size_t i = 0; a && i < a->n_options; ++i)
      pairs_.emplace_back(a->options[i].key, a->options[i].value);
    if (a && a->instance_name) instance_name_ = a->instance_name;
  }
  const std::vector<std::pair<std::string, std::string>> &pairs() const { return pairs_; }
  const std::string &instance_name() const { return instance_name_; }
  // The value of `name`; Error(EINVAL) when the host passed none.
  std::string get(const std::string &name) const {
    for (const auto &[k, v] : pairs_)
      if (k == name) return v;
    throw Error(EINVAL, "the host passed no '" + name + "' option");
  }
  uint64_t number(const std::string &name) const { return parse_option_number(name, get(name)); }
  bool flag(const std::string &name) const { return parse_option_flag(get(name)); }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
  std::string instance_name_;
};

namespace detail {

inline int64_t copy_text_out(const std::string &text, char *buf, size_t len) {
  if (len > 0) {
    size_t n = std::min(len - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return int64_t(text.size());
}

template <class T>
struct FrontendAdapter {
  static T *self(strata_frontend *fe) { return reinterpret_cast<T *>(fe); }

  static int start(const strata_frontend_host *host, strata_cluster_t cluster,
                   const strata_frontend_args *args, strata_frontend **out, strata_err *err) {
    return guard(err, [&]() -> int {
      *out = nullptr;
      if (!host || host->struct_size < sizeof(strata_frontend_host) || !host->client)
        throw Error(EINVAL, "the host gave no client routine table");
      std::unique_ptr<T> fe;
      try {
        fe = T::start(host, cluster, FrontendOptions(args));
      } catch (const std::invalid_argument &e) {
        throw Error(EINVAL, e.what());
      }
      if (!fe) throw Error(EIO, "the frontend did not start");
      *out = reinterpret_cast<strata_frontend *>(fe.release());
      return 0;
    });
  }

  static int stop(strata_frontend *fe, strata_err *err) {
    return guard(err, [&]() -> int {
      std::unique_ptr<T> owned(self(fe));
      std::string why;
      int rc = owned->stop(&why);
      if (rc < 0) throw Error(rc, why);
      return 0;
    });
  }

  static int64_t status(strata_frontend *fe, uint32_t format, char *buf, size_t len) {
    return guard(nullptr, [&]() -> int64_t {
      if (format == STRATA_FRONTEND_STATUS_LINE)
        return copy_text_out(self(fe)->status_line(), buf, len);
      if (format == STRATA_FRONTEND_STATUS_JSON)
        return copy_text_out(self(fe)->status_json(), buf, len);
      return -EOPNOTSUPP;
    });
  }

  static int64_t metrics(strata_frontend *fe, char *buf, size_t len) {
    return guard(nullptr,
                 [&]() -> int64_t { return copy_text_out(self(fe)->metrics(), buf, len); });
  }

  static constexpr strata_frontend_ops ops = {sizeof(strata_frontend_ops), 0, start, stop, status,
                                              metrics};
};

}  // namespace detail
}  // namespace strata::sdk

#define STRATA_FRONTEND_PLUGIN(Class, name, version, description, ...)          \
  static const strata_plugin_descriptor strata_plugin_descriptor_ = {           \
      sizeof(strata_plugin_descriptor),                                         \
      STRATA_ABI_MAJOR,                                                         \
      STRATA_ABI_MINOR,                                                         \
      STRATA_KIND_FRONTEND,                                                     \
      0,                                                                        \
      name,                                                                     \
      version,                                                                  \
      description,                                                              \
      &::strata::sdk::detail::FrontendAdapter<Class>::ops,                      \
      ::strata::sdk::detail::OptionTable{__VA_ARGS__}.specs,                    \
      ::strata::sdk::detail::OptionTable{__VA_ARGS__}.count,                    \
      {}};                                                                      \
  STRATA_DEFINE_PLUGIN_ENTRY(&strata_plugin_descriptor_)
