// How a data chunk is stored with the checksums of its bytes.
//
// A stored chunk value is the chunk's bytes followed by the CRC-32C
// (little-endian) of each checksum block of them: block k covers bytes
// [k*B, (k+1)*B) of the chunk, the last one only the bytes stored. B is the
// store's kv_csum_block_size (fixed at mkfs, dividing the chunk size); a store
// made before checksums has B = 0 and bare chunk values.
//
// Reads verify only the blocks they touch. A change to part of a chunk
// recomputes the checksums of the blocks it touches and keeps the stored
// ones of the others; a block that keeps some of its old bytes is verified
// first, so a corrupt block never gets a fresh checksum over its bad bytes:
// it is stored with a poisoned one (the complement) and keeps reading as EIO
// until it is rewritten whole. The change itself cannot fail: it was
// acknowledged when it was journaled.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::kv {

// Throws Error(EIO) naming the block and its byte range (from chunk_start),
// or Error(EUCLEAN) if `stored` cannot be a chunk with checksums.
// Verifies the blocks of `stored` that overlap [begin, end) (offsets in the
// chunk) and returns the chunk's bytes (a view into `stored`).
std::string_view verified_chunk_bytes(std::string_view stored, uint64_t block, uint64_t chunk_start,
                                      uint64_t begin, uint64_t end);
// The chunk's bytes without verifying anything.
std::string_view chunk_bytes(std::string_view stored, uint64_t block, uint64_t chunk_start);

// One chunk being changed by a transaction.
class ChunkImage {
 public:
  // `stored` is the chunk's current value (empty when absent).
  ChunkImage(std::string &&stored, uint64_t block, uint64_t chunk_start);

  const std::string &bytes() const { return bytes_; }
  // Replaces [at, at + src.size()) (growing the chunk with zeros if needed).
  void overwrite(uint64_t at, std::string_view src);
  // Zeroes [begin, end) of the stored bytes.
  void zero(uint64_t begin, uint64_t end);
  // Cuts or grows (with zeros) the stored bytes to n.
  void resize(uint64_t n);
  // The value to store: bytes and checksums.
  std::string encode() &&;
  // Blocks found corrupt under a partial change (stored poisoned).
  uint64_t poisoned_blocks() const { return n_poisoned_; }

 private:
  // The blocks overlapping [begin, end) are about to change: verify those
  // that keep old bytes, mark them all for a fresh checksum.
  void touch(uint64_t begin, uint64_t end);

  uint64_t block_;
  uint64_t chunk_start_;
  std::string bytes_;
  std::vector<uint32_t> crcs_;  // stored checksums, one per block
  std::vector<bool> dirty_;
  std::vector<bool> poisoned_;
  uint64_t n_poisoned_ = 0;
};

}  // namespace strata::kv
