// CRC-32C (Castagnoli) for frame headers, payloads and data segments, on
// ISA-L's crc32_iscsi. Same convention as the journal's crc32c
// (plugins/journals/journal_log/crc32c.h); kept here so the messenger does
// not depend on a plugin's internals.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::msg {

// Extends `crc` (the CRC-32C of some bytes A) to the CRC-32C of A followed
// by these `len` bytes; crc32c_extend(0, p, n) == crc32c(p, n).
uint32_t crc32c_extend(uint32_t crc, const void *data, std::size_t len);

// The standard CRC-32C of `len` bytes ("123456789" -> 0xE3069283).
inline uint32_t crc32c(const void *data, std::size_t len) { return crc32c_extend(0, data, len); }

}  // namespace strata::msg
