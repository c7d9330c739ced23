#include "filestore/options.h"

#include <string>

#include "checksum/block_checksums.h"

namespace strata::filestore {

FileStoreOptions FileStoreOptions::from(const sdk::OpenArgs &args) {
  FileStoreOptions o;
  o.meta_engine = kvdb::engine_from_name(args.option("meta_engine", "rocksdb"));
  long long fds = args.option_int("fd_cache_size", 1024);
  if (fds < 1 || fds > (1 << 20))
    throw sdk::make_error(EINVAL, "fd_cache_size = %lld: must be between 1 and 1048576", fds);
  o.fd_cache_size = static_cast<size_t>(fds);
  long long cache = args.option_int("meta_cache_bytes", 32ll << 20);
  if (cache < 0) throw sdk::make_error(EINVAL, "meta_cache_bytes = %lld: must be >= 0", cache);
  o.meta_cache_bytes = static_cast<size_t>(cache);
  long long block = args.option_int("csum_block_size", 4 << 10);
  if (block != 0 && !checksum::valid_block_size(static_cast<uint64_t>(block < 0 ? 0 : block)))
    throw sdk::make_error(EINVAL,
                          "csum_block_size = %lld: must be a power of two in 4K..1M (or 0: none)",
                          block);
  o.csum_block_size = static_cast<uint64_t>(block);
  return o;
}

}  // namespace strata::filestore
