// What every connection of one NbdServer shares: the exports, the options,
// the counters behind stats(), the stop signal, and the log. Owned by the
// server, which outlives every connection thread (it joins them).
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <string>
#include <vector>

#include "nbd_server.h"
#include "strata/plugin.h"

namespace strata::rbd::nbd {

// Levels handed to NbdServerOptions::log: the host's (strata_log_level),
// as the file export's are.
constexpr int kLogError = STRATA_LOG_ERROR;
constexpr int kLogWarning = STRATA_LOG_WARN;
constexpr int kLogInfo = STRATA_LOG_INFO;
constexpr int kLogDebug = STRATA_LOG_DEBUG;

struct StatsCounters {
  std::atomic<uint64_t> connections_total{0}, connections_open{0};
  std::atomic<uint64_t> requests{0}, errors{0}, protocol_errors{0};
  std::atomic<uint64_t> reads{0}, writes{0}, flushes{0}, trims{0}, zeroes{0}, caches{0},
      block_status{0};
  std::atomic<uint64_t> bytes_read{0}, bytes_written{0};

  NbdServerStats snapshot() const;
};

struct ServerContext {
  std::vector<NbdExport> exports;
  NbdServerOptions opts;
  int stop_fd = -1;  // becomes readable (and stays so) when the server stops
  StatsCounters stats;

  // The export named `name`, or nullptr.
  const NbdExport *find_export(const std::string &name) const {
    for (const auto &e : exports)
      if (e.name == name) return &e;
    return nullptr;
  }
  bool read_only(const NbdExport &e) const { return opts.read_only || e.device->read_only(); }

  [[gnu::format(printf, 3, 4)]] void log(int level, const char *fmt, ...) const;
};

}  // namespace strata::rbd::nbd
