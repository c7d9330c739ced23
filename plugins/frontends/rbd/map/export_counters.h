// The counters behind FileExport::stats(): bumped by the request paths
// on any thread, read as one (not atomic as a whole) snapshot.
#pragma once

#include <atomic>
#include <cstdint>

#include "file_export.h"

namespace strata::rbd {

struct ExportCounters {
  std::atomic<uint64_t> reads{0}, writes{0}, flushes{0}, discards{0}, errors{0};
  std::atomic<uint64_t> bytes_read{0}, bytes_written{0};

  FileExportStats snapshot() const {
    FileExportStats s;
    s.reads = reads.load();
    s.writes = writes.load();
    s.flushes = flushes.load();
    s.discards = discards.load();
    s.errors = errors.load();
    s.bytes_read = bytes_read.load();
    s.bytes_written = bytes_written.load();
    return s;
  }
};

}  // namespace strata::rbd
