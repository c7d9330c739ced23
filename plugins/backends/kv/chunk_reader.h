// Reading a byte range of an object's chunked data (see chunk_writer.h):
// absent chunks and bytes past a short chunk read as zero.
#pragma once

#include <cstdint>

#include "kv/key_layout.h"
#include "kvdb/kvdb.h"

namespace strata::kv {

// Fills out[0, length) with the object's bytes [offset, offset + length).
// REQUIRES: the range lies within the object's size. One point get when the
// range is inside one chunk, else one bounded scan of the chunks it spans.
// With csum_block > 0 the blocks read are verified (chunk_image.h): a
// mismatch throws Error(EIO) naming the block and its bytes.
void read_chunks(const kvdb::Database &db, const ObjectKeys &obj, uint64_t chunk_size,
                 uint64_t csum_block, uint64_t offset, uint64_t length, char *out);

}  // namespace strata::kv
