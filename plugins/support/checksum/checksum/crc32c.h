// CRC-32C (Castagnoli) on ISA-L's crc32_iscsi, for the plugins: journal
// records and superblocks, and the block checksums of backend data.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::checksum {

// Extends `crc` (the CRC-32C of some bytes A) to the CRC-32C of A followed
// by these `len` bytes; crc32c_extend(0, p, n) == crc32c(p, n).
uint32_t crc32c_extend(uint32_t crc, const void *data, std::size_t len);

// The standard CRC-32C of `len` bytes ("123456789" -> 0xE3069283).
inline uint32_t crc32c(const void *data, std::size_t len) { return crc32c_extend(0, data, len); }

}  // namespace strata::checksum
