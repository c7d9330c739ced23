#include "kv/chunk_image.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "checksum/block_checksums.h"
#include "checksum/crc32c.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::kv {
namespace {

using checksum::kCrcBytes;

uint64_t blocks_of(uint64_t len, uint64_t block) { return len / block + (len % block != 0); }

// Length of the bytes in a stored value of `size` bytes: the value is L bytes
// plus 4 * ceil(L / B), which grows strictly with L, so L is unique.
uint64_t data_length(uint64_t size, uint64_t block, uint64_t chunk_start) {
  const uint64_t n = (size + block + kCrcBytes - 1) / (block + kCrcBytes);
  const uint64_t len = size - n * kCrcBytes;
  if (size < n * kCrcBytes || blocks_of(len, block) != n)
    throw sdk::make_error(EIO, "chunk at byte %llu has a damaged length (%llu bytes stored)",
                          static_cast<unsigned long long>(chunk_start),
                          static_cast<unsigned long long>(size));
  return len;
}

[[noreturn]] void bad_block(uint64_t chunk_start, uint64_t block, uint64_t k, uint64_t len,
                            uint32_t stored, uint32_t actual) {
  const uint64_t bs = chunk_start + k * block;
  throw sdk::make_error(
      EIO, "block %llu (bytes %llu..%llu) fails its checksum (stored %08x, found %08x)",
      static_cast<unsigned long long>(bs / block), static_cast<unsigned long long>(bs),
      static_cast<unsigned long long>(bs + len), stored, actual);
}

void verify_block(std::string_view bytes, std::string_view crcs, uint64_t block,
                  uint64_t chunk_start, uint64_t k) {
  const uint64_t bs = k * block;
  const uint64_t len = std::min<uint64_t>(block, bytes.size() - bs);
  const uint32_t stored = checksum::crc_at(crcs, k);
  const uint32_t actual = checksum::crc32c(bytes.data() + bs, len);
  if (stored != actual) bad_block(chunk_start, block, k, len, stored, actual);
}

}  // namespace

std::string_view chunk_bytes(std::string_view stored, uint64_t block, uint64_t chunk_start) {
  if (block == 0 || stored.empty()) return stored;
  return stored.substr(0, data_length(stored.size(), block, chunk_start));
}

std::string_view verified_chunk_bytes(std::string_view stored, uint64_t block, uint64_t chunk_start,
                                      uint64_t begin, uint64_t end) {
  std::string_view bytes = chunk_bytes(stored, block, chunk_start);
  if (block == 0) return bytes;
  std::string_view crcs = stored.substr(bytes.size());
  end = std::min<uint64_t>(end, bytes.size());
  for (uint64_t k = begin / block; k * block < end; ++k)
    verify_block(bytes, crcs, block, chunk_start, k);
  return bytes;
}

ChunkImage::ChunkImage(std::string &&stored, uint64_t block, uint64_t chunk_start)
    : block_(block), chunk_start_(chunk_start) {
  if (block_ == 0) {
    bytes_ = std::move(stored);
    return;
  }
  const uint64_t len = chunk_bytes(stored, block, chunk_start).size();
  const uint64_t n = blocks_of(len, block_);
  crcs_.reserve(n);
  for (uint64_t k = 0; k < n; ++k)
    crcs_.push_back(checksum::crc_at(std::string_view(stored).substr(len), k));
  dirty_.assign(n, false);
  stored.resize(len);
  bytes_ = std::move(stored);
}

void ChunkImage::touch(uint64_t begin, uint64_t end) {
  if (block_ == 0 || begin >= end) return;
  const uint64_t old_len = bytes_.size();
  const uint64_t last = (end - 1) / block_;
  if (dirty_.size() <= last) {
    dirty_.resize(last + 1, false);
    crcs_.resize(last + 1, 0);
  }
  for (uint64_t k = begin / block_; k <= last; ++k) {
    const uint64_t bs = k * block_;
    const uint64_t old_end = std::clamp(old_len, bs, bs + block_);
    const bool keeps_old = old_end > bs && (begin > bs || end < old_end);
    if (keeps_old && !dirty_[k]) {
      const uint64_t len = old_end - bs;
      const uint32_t actual = checksum::crc32c(bytes_.data() + bs, len);
      if (actual != crcs_[k]) {
        if (poisoned_.size() <= k) poisoned_.resize(k + 1, false);
        poisoned_[k] = true;
        ++n_poisoned_;
      }
    }
    dirty_[k] = true;
  }
}

void ChunkImage::overwrite(uint64_t at, std::string_view src) {
  if (src.empty()) return;
  touch(at, at + src.size());
  if (bytes_.size() < at + src.size()) {
    // Growing: the old last block gains bytes, so it changes too.
    touch(bytes_.size(), at + src.size());
    bytes_.resize(at + src.size(), '\0');
  }
  std::memcpy(bytes_.data() + at, src.data(), src.size());
}

void ChunkImage::zero(uint64_t begin, uint64_t end) {
  end = std::min<uint64_t>(end, bytes_.size());
  if (begin >= end) return;
  touch(begin, end);
  std::memset(bytes_.data() + begin, 0, end - begin);
}

void ChunkImage::resize(uint64_t n) {
  if (n == bytes_.size()) return;
  if (n < bytes_.size())
    touch(n, bytes_.size());
  else
    touch(bytes_.size(), n);
  bytes_.resize(n, '\0');
}

std::string ChunkImage::encode() && {
  if (block_ == 0) return std::move(bytes_);
  const uint64_t n = blocks_of(bytes_.size(), block_);
  crcs_.resize(n, 0);
  dirty_.resize(n, true);
  std::string out = std::move(bytes_);
  const uint64_t len = out.size();
  out.reserve(len + n * kCrcBytes);
  for (uint64_t k = 0; k < n; ++k) {
    uint32_t crc = crcs_[k];
    if (dirty_[k])
      crc = checksum::crc32c(out.data() + k * block_, std::min(block_, len - k * block_));
    if (k < poisoned_.size() && poisoned_[k]) crc = ~crc;  // never matches: stays EIO
    checksum::append_crc(out, crc);
  }
  return out;
}

}  // namespace strata::kv
