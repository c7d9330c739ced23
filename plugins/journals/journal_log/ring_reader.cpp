#include "journal_log/ring_reader.h"

#include <algorithm>

namespace strata::journal {

RingReader::RingReader(Media &media, uint64_t ring_offset, uint64_t capacity,
                       uint32_t block_size, size_t window_bytes)
    : media_(media),
      ring_offset_(ring_offset),
      capacity_(capacity),
      block_size_(block_size),
      window_bytes_(std::max<size_t>(window_bytes / block_size * block_size, block_size)) {}

const uint8_t *RingReader::read(uint64_t off, uint64_t len) {
  if (off >= win_start_ && off + len <= win_start_ + win_len_)
    return buf_.data() + (off - win_start_);
  // Reads cover whole blocks from `off`, at least one window's worth, but
  // never past the end of the ring.
  uint64_t want = std::max<uint64_t>((len + block_size_ - 1) / block_size_ * block_size_,
                                     window_bytes_);
  want = std::min<uint64_t>(want, capacity_ - off);
  buf_.ensure(want, block_size_);
  media_.read(ring_offset_ + off, buf_.data(), want);
  win_start_ = off;
  win_len_ = want;
  return buf_.data();
}

uint64_t RingReader::next_data(uint64_t off) {
  if (off >= capacity_) return capacity_;
  uint64_t at = media_.next_data(ring_offset_ + off);
  if (at <= ring_offset_ + off) return off;
  uint64_t ring = std::min(at - ring_offset_, capacity_);
  return ring / block_size_ * block_size_;  // a hole may end inside a block
}

}  // namespace strata::journal
