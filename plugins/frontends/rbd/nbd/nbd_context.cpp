#include "nbd_context.h"

#include <cstdio>

namespace strata::rbd::nbd {

NbdServerStats StatsCounters::snapshot() const {
  NbdServerStats s;
  s.connections_total = connections_total;
  s.connections_open = connections_open;
  s.requests = requests;
  s.errors = errors;
  s.protocol_errors = protocol_errors;
  s.reads = reads;
  s.writes = writes;
  s.flushes = flushes;
  s.trims = trims;
  s.zeroes = zeroes;
  s.caches = caches;
  s.block_status = block_status;
  s.bytes_read = bytes_read;
  s.bytes_written = bytes_written;
  return s;
}

void ServerContext::log(int level, const char *fmt, ...) const {
  if (!opts.log) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  opts.log(level, line);
}

}  // namespace strata::rbd::nbd
