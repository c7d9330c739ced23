// How the daemon makes the real MetaStore (ObjectMetaStore, defined by the
// strata_mds_store library) without depending on its class.
#pragma once

#include <cstdint>
#include <memory>

#include "cluster/cluster_map.h"
#include "mds/meta_store.h"

namespace strata::client {
class ClusterClient;
}

namespace strata::mds {

struct MetaStoreOptions {
  uint64_t journal_segment_bytes = 4u << 20;
  uint64_t dir_split_entries = 10000;
  uint64_t journal_delay_ms = 20;
  uint64_t apply_max_delay_ms = 2000;
  uint64_t purge_busy_rate = 200;
};

// The store of filesystem `fs` in its metadata pool, reached through
// `client` (which must outlive the store).
std::unique_ptr<MetaStore> make_object_meta_store(std::shared_ptr<client::ClusterClient> client,
                                                  const cluster::FsInfo &fs,
                                                  const MetaStoreOptions &options);

}  // namespace strata::mds
