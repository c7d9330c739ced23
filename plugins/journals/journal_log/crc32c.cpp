#include "journal_log/crc32c.h"

#include <isa-l/crc.h>

#include <climits>

namespace strata::journal {

uint32_t crc32c(const void *data, size_t len) {
  // ISA-L takes an int length and returns the register without the final
  // inversion, so chain over chunks and invert once at the end.
  auto *p = static_cast<unsigned char *>(const_cast<void *>(data));
  uint32_t state = 0xFFFFFFFFu;
  constexpr size_t kChunk = size_t{1} << 30;
  while (len > 0) {
    size_t n = len < kChunk ? len : kChunk;
    state = crc32_iscsi(p, static_cast<int>(n), state);
    p += n;
    len -= n;
  }
  return ~state;
}

}  // namespace strata::journal
