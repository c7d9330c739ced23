// Reading, writing and creating the two alternating superblock copies.
#pragma once

#include <cstdint>

#include "journal_log/format.h"
#include "journal_log/media.h"

namespace strata::journal {

// The valid copy with the higher write_count, checked against the medium's
// size and alignment. Throws sdk::Error: -EUCLEAN when neither copy is
// valid or the geometry is impossible, -EINVAL for an unknown format version.
Superblock load_superblock(Media &media);

// Bumps sb.write_count, writes the copy it selects and makes it durable.
void store_superblock(Media &media, Superblock &sb);

// A new, empty journal: fresh uuid, epoch 1, trim point at ring offset 0
// with no lower bound on the first seq; the ring spans `capacity` bytes
// (rounded down to block_size) after the two superblock blocks. Writes both
// copies (so an older journal's superblock cannot survive in either) and
// returns what it wrote. Records `owner` when it has an id. Throws
// sdk::Error.
Superblock format_journal(Media &media, uint32_t block_size, uint64_t capacity,
                          const JournalOwner &owner = {});

// The medium size format_journal needs for a ring of `capacity` bytes.
uint64_t medium_size_for(uint32_t block_size, uint64_t capacity);
// The largest ring a medium of `medium_size` bytes holds.
uint64_t capacity_for(uint32_t block_size, uint64_t medium_size);
// Throws -EINVAL unless block_size is a power of two in [512, 1 MiB].
void check_block_size(uint64_t block_size);

}  // namespace strata::journal
