// Reads byte ranges of the ring through a read-ahead window, so that replay
// issues large aligned reads instead of one per record.
#pragma once

#include <cstdint>

#include "journal_log/aligned_buffer.h"
#include "journal_log/media.h"

namespace strata::journal {

class RingReader {
 public:
  // `ring_offset`/`capacity`: where the ring lies on the medium; both are
  // multiples of `block_size`, itself a multiple of the media alignment.
  RingReader(Media &media, uint64_t ring_offset, uint64_t capacity, uint32_t block_size,
             size_t window_bytes = size_t{1} << 20);

  // The bytes [off, off + len) of the ring. REQUIRES: off + len <= capacity,
  // off a multiple of block_size. Valid until the next call. Throws
  // sdk::Error when the medium fails.
  const uint8_t *read(uint64_t off, uint64_t len);
  // The first block-aligned ring offset at or after `off` that may hold
  // data (Media::next_data); the capacity when none can up to the ring's
  // end.
  uint64_t next_data(uint64_t off);

 private:
  Media &media_;
  uint64_t ring_offset_, capacity_;
  uint32_t block_size_;
  size_t window_bytes_;
  AlignedBuffer buf_;
  uint64_t win_start_ = 0, win_len_ = 0;  // the ring range buf_ holds
};

}  // namespace strata::journal
