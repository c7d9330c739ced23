#include "checksum/block_checksums.h"

#include <algorithm>

#include "checksum/crc32c.h"

namespace strata::checksum {
namespace {

constexpr std::size_t kZeroChunk = 64 << 10;
const unsigned char kZeros[kZeroChunk] = {};

uint32_t extend_with_zeros(uint32_t crc, std::size_t n) {
  while (n > 0) {
    std::size_t step = std::min(n, kZeroChunk);
    crc = crc32c_extend(crc, kZeros, step);
    n -= step;
  }
  return crc;
}

}  // namespace

bool valid_block_size(uint64_t block) {
  return block >= kMinBlockSize && block <= kMaxBlockSize && (block & (block - 1)) == 0;
}

uint32_t padded_block_crc(const void *data, std::size_t len, std::size_t block) {
  uint32_t crc = crc32c(data, len);
  return len < block ? extend_with_zeros(crc, block - len) : crc;
}

uint32_t zero_block_crc(std::size_t block) { return extend_with_zeros(0, block); }

void append_crc(std::string &out, uint32_t crc) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}

uint32_t crc_at(std::string_view bytes, std::size_t index) {
  uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i)
    v |= uint32_t{static_cast<unsigned char>(bytes[index * kCrcBytes + i])} << (8 * i);
  return v;
}

void set_crc_at(std::string &bytes, std::size_t index, uint32_t crc) {
  for (std::size_t i = 0; i < 4; ++i)
    bytes[index * kCrcBytes + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
}

}  // namespace strata::checksum
