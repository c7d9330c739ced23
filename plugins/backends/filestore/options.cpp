#include "filestore/options.h"

#include <string>

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
  return o;
}

}  // namespace strata::filestore
