// TEMPORARY (see CMakeLists.txt): FileData::create until fuse-data's
// file_data.cpp is merged. Delete at that merge.
#include "file_data.h"

namespace strata::fuse {

std::unique_ptr<FileData> FileData::create(const strata_client_api *, strata_cluster_t,
                                           FileDataOptions) {
  return nullptr;
}

}  // namespace strata::fuse
