// Block checksums of data at rest, as the backends keep them.
//
// An object's data is checksummed in blocks of a fixed size B (a backend
// option fixed at mkfs): block k covers bytes [k*B, (k+1)*B) of the data
// seen as padded with zeros past its end. Padding makes growing an object
// (a TRUNCATE up, a WRITE past the end) leave every existing checksum valid,
// and lets a backend store nothing for a block of zeros (a hole): a missing
// checksum stands for zero_block_crc(B).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::checksum {

inline constexpr uint64_t kMinBlockSize = 4 << 10;
inline constexpr uint64_t kMaxBlockSize = 1 << 20;

// A power of two in [kMinBlockSize, kMaxBlockSize].
bool valid_block_size(uint64_t block);

// The CRC-32C of `len` bytes (len <= block) followed by block - len zeros.
uint32_t padded_block_crc(const void *data, std::size_t len, std::size_t block);

// The CRC-32C of `block` zero bytes.
uint32_t zero_block_crc(std::size_t block);

// Checksums are stored as 4-byte little-endian words.
inline constexpr std::size_t kCrcBytes = 4;
void append_crc(std::string &out, uint32_t crc);
uint32_t crc_at(std::string_view bytes, std::size_t index);
void set_crc_at(std::string &bytes, std::size_t index, uint32_t crc);

}  // namespace strata::checksum
