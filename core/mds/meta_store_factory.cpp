#include "mds/meta_store_factory.h"

#include "mds/object_meta_store.h"

namespace strata::mds {

std::unique_ptr<MetaStore> make_object_meta_store(std::shared_ptr<client::ClusterClient> client,
                                                  const cluster::FsInfo &fs,
                                                  const MetaStoreOptions &options) {
  ObjectMetaStoreOptions o;
  o.journal_segment_bytes = options.journal_segment_bytes;
  o.dir_split_entries = options.dir_split_entries;
  o.journal_delay = std::chrono::milliseconds(options.journal_delay_ms);
  o.apply_max_delay = std::chrono::milliseconds(options.apply_max_delay_ms);
  o.purge_busy_rate = options.purge_busy_rate;
  // Purges of files whose inode names no pool go to the filesystem's data pool.
  o.default_data_pool = fs.data_pool;
  return std::make_unique<ObjectMetaStore>(std::move(client), fs.metadata_pool, o);
}

}  // namespace strata::mds
