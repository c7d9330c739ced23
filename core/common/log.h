// A small leveled logger owned by a daemon's or command's main and passed by
// reference. Thread-safe; writes one line per message to stderr (or a file).
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "strata/plugin.h"

namespace strata {

class Logger {
 public:
  explicit Logger(int min_level = STRATA_LOG_INFO, std::FILE *out = stderr)
      : min_level_(min_level), out_(out) {}

  void set_level(int level) { min_level_ = level; }
  int level() const { return min_level_; }
  // `component` names the source, e.g. "store", "plugin xfs".
  void log(int level, const std::string &component, const std::string &msg);
  void info(const std::string &c, const std::string &m) { log(STRATA_LOG_INFO, c, m); }
  void warn(const std::string &c, const std::string &m) { log(STRATA_LOG_WARN, c, m); }
  void error(const std::string &c, const std::string &m) { log(STRATA_LOG_ERROR, c, m); }
  void debug(const std::string &c, const std::string &m) { log(STRATA_LOG_DEBUG, c, m); }

  // Parses "debug|info|warn|error"; -1 if unknown.
  static int parse_level(const std::string &s);

 private:
  std::mutex mu_;
  int min_level_;
  std::FILE *out_;
};

// Host services handed to one plugin instance: routes its log lines to a
// Logger under the plugin's name. Must outlive the plugin instance.
class PluginLogBridge {
 public:
  PluginLogBridge(Logger &logger, std::string component);
  const strata_host_services *services() const { return &services_; }

 private:
  // Plugin threads call it: noexcept, and a message it cannot log is lost.
  static void log_cb(void *ctx, int level, const char *msg) noexcept;
  Logger &logger_;
  std::string component_;
  strata_host_services services_{};
};

}  // namespace strata
