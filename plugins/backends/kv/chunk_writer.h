// Changes to an object's data, which lives in fixed-size chunks:
// chunk i holds bytes [i*chunk_size, (i+1)*chunk_size). A chunk may be
// shorter than chunk_size or absent; the missing bytes read as zero (sparse).
// No chunk holds bytes at or past the object's size, so extending an object
// (WRITE past the end, TRUNCATE up) never has stale bytes to clear.
//
// Every method rewrites only the chunks its range touches, and reads a chunk
// only when the new bytes do not replace all of its existing content: a
// 4 KiB overwrite costs one chunk read and one chunk put; a write to a new
// object or past the end costs no read at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kv/chunk_image.h"
#include "kv/key_layout.h"
#include "kvdb/kvdb.h"

namespace strata::kv {

class ChunkWriter {
 public:
  // csum_block: the checksum block size (chunk_image.h); 0 for none.
  ChunkWriter(kvdb::Transaction &txn, uint64_t chunk_size, uint64_t csum_block)
      : txn_(txn), chunk_size_(chunk_size), csum_block_(csum_block) {}

  // Stores `data` at `offset` of an object whose size is `size`. The caller
  // updates the size (and checked that offset + data.size() does not wrap).
  void write(const ObjectKeys &obj, uint64_t size, uint64_t offset, std::string_view data);
  // Zeroes [offset, offset + length) clipped to `size`.
  void zero(const ObjectKeys &obj, uint64_t size, uint64_t offset, uint64_t length);
  // Drops the bytes at or past new_size (nothing to do when growing).
  void truncate(const ObjectKeys &obj, uint64_t size, uint64_t new_size);
  // Drops every chunk of an object of `size` bytes.
  void erase_all(const ObjectKeys &obj, uint64_t size);

  // Blocks found corrupt under partial changes so far (chunk_image.h).
  uint64_t poisoned_blocks() const { return poisoned_blocks_; }

  // Chunks an object of `size` bytes may have: ceil(size / chunk_size).
  uint64_t chunk_count(uint64_t size) const {
    return size / chunk_size_ + (size % chunk_size_ != 0);
  }

 private:
  // Zeroes [begin, end) within one chunk (offsets relative to the chunk).
  void zero_within_chunk(const ObjectKeys &obj, uint64_t index, uint64_t begin, uint64_t end,
                         uint64_t content_end);
  // Removes chunks [first, end_index).
  void erase_chunks(const ObjectKeys &obj, uint64_t first, uint64_t end_index);
  // Puts the chunk, or deletes it when it holds only zeros (stays sparse);
  // a delete is only emitted if the chunk may exist.
  void store(std::string &&key, ChunkImage &&chunk, bool may_exist);

  kvdb::Transaction &txn_;
  uint64_t chunk_size_;
  uint64_t csum_block_;
  uint64_t poisoned_blocks_ = 0;
};

}  // namespace strata::kv
