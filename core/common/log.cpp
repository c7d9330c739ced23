#include "common/log.h"

#include <chrono>
#include <ctime>

namespace strata {

namespace {
const char *level_name(int level) {
  switch (level) {
    case STRATA_LOG_DEBUG: return "debug";
    case STRATA_LOG_INFO: return "info";
    case STRATA_LOG_WARN: return "WARN";
    default: return "ERROR";
  }
}
}  // namespace

void Logger::log(int level, const std::string &component, const std::string &msg) {
  if (level < min_level_) return;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%H:%M:%S", &tm);
  std::lock_guard lk(mu_);
  std::fprintf(out_, "%s.%03d %s %s: %s\n", ts, ms, level_name(level), component.c_str(),
               msg.c_str());
  std::fflush(out_);
}

int Logger::parse_level(const std::string &s) {
  if (s == "debug") return STRATA_LOG_DEBUG;
  if (s == "info") return STRATA_LOG_INFO;
  if (s == "warn") return STRATA_LOG_WARN;
  if (s == "error") return STRATA_LOG_ERROR;
  return -1;
}

PluginLogBridge::PluginLogBridge(Logger &logger, std::string component)
    : logger_(logger), component_(std::move(component)) {
  services_.struct_size = sizeof services_;
  services_.ctx = this;
  services_.log = &PluginLogBridge::log_cb;
}

void PluginLogBridge::log_cb(void *ctx, int level, const char *msg) noexcept {
  auto *self = static_cast<PluginLogBridge *>(ctx);
  try {
    self->logger_.log(level, self->component_, msg ? msg : "");
  } catch (...) {
    // Only an allocation can fail here; the plugin must not see it.
  }
}

}  // namespace strata
