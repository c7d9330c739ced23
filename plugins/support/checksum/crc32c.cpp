#include "checksum/crc32c.h"

#include <isa-l/crc.h>

namespace strata::checksum {

uint32_t crc32c_extend(uint32_t crc, const void *data, std::size_t len) {
  // ISA-L's crc32_iscsi takes the raw register (initial value ~0) and an int
  // length and returns the register without the final inversion: undo the
  // caller's finalisation, chain over int-sized chunks, finalise once.
  auto *p = static_cast<unsigned char *>(const_cast<void *>(data));
  uint32_t state = ~crc;
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  while (len > 0) {
    std::size_t n = len < kChunk ? len : kChunk;
    state = crc32_iscsi(p, static_cast<int>(n), state);
    p += n;
    len -= n;
  }
  return ~state;
}

}  // namespace strata::checksum
