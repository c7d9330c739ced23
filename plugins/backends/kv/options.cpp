#include "kv/options.h"

#include <string>

#include "checksum/block_checksums.h"

namespace strata::kv {

const strata_option_spec kOptionSpecs[5] = {
    {"kv_engine", STRATA_OPT_ENUM, "rocksdb", "rocksdb|leveldb",
     "embedded database holding the store; fixed at mkfs"},
    {"kv_chunk_size", STRATA_OPT_INT, "64K", nullptr,
     "object data is stored in chunks of this size (4K..16M); a small overwrite rewrites one "
     "chunk; fixed at mkfs"},
    {"kv_cache_size", STRATA_OPT_INT, "64M", nullptr, "database block cache in bytes"},
    {"kv_write_buffer_size", STRATA_OPT_INT, "0", nullptr,
     "memtable size in bytes before it is written out; 0 = the engine's default"},
    {"kv_csum_block_size", STRATA_OPT_INT, "4K", nullptr,
     "chunk data is checksummed (crc32c) in blocks of this size (4K..1M, a power of two, at "
     "most kv_chunk_size); every read verifies the blocks it touches; 0 = no checksums; fixed at "
     "mkfs"},
};

namespace {
constexpr long long kMinChunk = 4 << 10;
constexpr long long kMaxChunk = 16 << 20;
}  // namespace

StoreOptions StoreOptions::from(const sdk::OpenArgs &args) {
  StoreOptions o;
  o.engine = kvdb::engine_from_name(args.option("kv_engine", "rocksdb"));
  long long chunk = args.option_int("kv_chunk_size", 64 << 10);
  if (chunk < kMinChunk || chunk > kMaxChunk)
    throw sdk::Error(EINVAL, "kv_chunk_size " + std::to_string(chunk) + " is outside 4K..16M");
  o.chunk_size = static_cast<uint64_t>(chunk);
  long long block = args.option_int("kv_csum_block_size", 4 << 10);
  if (block != 0 && (!checksum::valid_block_size(static_cast<uint64_t>(block < 0 ? 0 : block)) ||
                     o.chunk_size % static_cast<uint64_t>(block) != 0))
    throw sdk::Error(EINVAL, "kv_csum_block_size " + std::to_string(block) +
                                 " must be a power of two in 4K..1M dividing kv_chunk_size "
                                 "(or 0: none)");
  o.csum_block_size = static_cast<uint64_t>(block);
  long long cache = args.option_int("kv_cache_size", 64 << 20);
  if (cache < 0) throw sdk::Error(EINVAL, "kv_cache_size must not be negative");
  o.cache_bytes = static_cast<uint64_t>(cache);
  long long wb = args.option_int("kv_write_buffer_size", 0);
  if (wb < 0) throw sdk::Error(EINVAL, "kv_write_buffer_size must not be negative");
  o.write_buffer_bytes = static_cast<uint64_t>(wb);
  return o;
}

kvdb::OpenOptions StoreOptions::database_options() const {
  kvdb::OpenOptions d;
  d.engine = engine;
  d.cache_bytes = cache_bytes;
  d.write_buffer_bytes = write_buffer_bytes;
  return d;
}

}  // namespace strata::kv
