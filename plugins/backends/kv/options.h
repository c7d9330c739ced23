// The kv backend's configuration keys and their parsed form.
#pragma once

#include <cstdint>

#include "kvdb/kvdb.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/plugin.h"

namespace strata::kv {

// The keys the host validates (and fills defaults for) in the [osd] section.
extern const strata_option_spec kOptionSpecs[5];

struct StoreOptions {
  kvdb::Engine engine = kvdb::Engine::rocksdb;
  uint64_t chunk_size = 64 << 10;  // fixed at mkfs
  uint64_t csum_block_size = 4 << 10;  // fixed at mkfs; divides chunk_size
  uint64_t cache_bytes = 64 << 20;
  uint64_t write_buffer_bytes = 0;  // 0 = engine default

  // Throws Error(EINVAL) naming the key of a value out of range.
  static StoreOptions from(const sdk::OpenArgs &args);
  kvdb::OpenOptions database_options() const;
};

}  // namespace strata::kv
