// Configuration keys shared by the filestore backends. Each plugin lists the
// specs it accepts in its own descriptor; FileStoreOptions reads them.
#pragma once

#include <cstddef>

#include "kvdb/kvdb.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/plugin.h"

namespace strata::filestore {

inline constexpr strata_option_spec kMetaEngineOption = {
    "meta_engine", STRATA_OPT_ENUM, "rocksdb", "rocksdb|leveldb",
    "key-value engine of the metadata database (object index, xattrs, omap); fixed at mkfs"};
inline constexpr strata_option_spec kFdCacheOption = {
    "fd_cache_size", STRATA_OPT_INT, "1024", nullptr,
    "data files kept open (least recently used ones are closed beyond this)"};
inline constexpr strata_option_spec kMetaCacheOption = {
    "meta_cache_bytes", STRATA_OPT_INT, "32M", nullptr, "block cache of the metadata database"};
inline constexpr strata_option_spec kAllowAnyFsOption = {
    "allow_any_fs", STRATA_OPT_BOOL, "false", nullptr,
    "skip the file-system type check (tests and development only)"};

inline constexpr strata_option_spec kCsumBlockOption = {
    "csum_block_size", STRATA_OPT_INT, "4K", nullptr,
    "object data is checksummed (crc32c) in blocks of this size (4K..1M, a power of two); "
    "every read verifies the blocks it touches; 0 = no checksums; fixed at mkfs"};

struct FileStoreOptions {
  kvdb::Engine meta_engine = kvdb::Engine::rocksdb;
  size_t fd_cache_size = 1024;
  size_t meta_cache_bytes = 32u << 20;
  uint64_t csum_block_size = 4 << 10;

  // Throws Error(EINVAL) for values out of range.
  static FileStoreOptions from(const sdk::OpenArgs &args);
};

}  // namespace strata::filestore
