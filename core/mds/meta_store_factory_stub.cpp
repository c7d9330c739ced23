// Stands in for make_object_meta_store while strata_mds_store (the
// ObjectMetaStore, another branch) is not in the tree: the daemon then
// refuses to take a filesystem over. Built only without strata_mds_store.
#include "mds/meta_store_factory.h"

namespace strata::mds {

std::unique_ptr<MetaStore> make_object_meta_store(client::ClusterClient &, const cluster::FsInfo &,
                                                  const MetaStoreOptions &) {
  return nullptr;
}

}  // namespace strata::mds
