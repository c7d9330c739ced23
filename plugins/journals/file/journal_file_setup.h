// Making and removing the medium of a `file` journal.
#pragma once

#include <cstdint>
#include <string>

#include "file_media.h"
#include "journal_log/format.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

// Creates an empty journal at `path`:
//  - a regular file (new or replacing one): built as "<path>.creating",
//    preallocated and zero-filled (so that later writes change no file
//    metadata and fdatasync is a pure device flush), formatted, then renamed
//    over `path`;
//  - a block device: formatted in place; the ring spans `capacity` bytes, or
//    the whole device when capacity is 0 or larger than the device.
// Throws sdk::Error.
void create_file_journal(const std::string &path, uint32_t block_size, uint64_t capacity,
                         const JournalOwner &owner, const FileMediaOptions &io,
                         const sdk::Logger &log);

// Removes the file, or wipes the superblocks of a block device so that it no
// longer opens as a journal. A missing file is not an error.
void destroy_file_journal(const std::string &path, const FileMediaOptions &io);

}  // namespace strata::journal
