// CRC-32C (Castagnoli), the checksum of every journal record and superblock.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::journal {

// The standard CRC-32C of `len` bytes ("123456789" -> 0xE3069283).
uint32_t crc32c(const void *data, size_t len);

}  // namespace strata::journal
