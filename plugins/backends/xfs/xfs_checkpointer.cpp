#include "xfs_checkpointer.h"

#include <linux/magic.h>

#include "filestore/fs_check.h"
#include "strata/objectstore.h"

namespace strata::xfs {

void XfsCheckpointer::check_file_system(const std::string &root) const {
  if (!allow_any_fs_) filestore::require_file_system(root, XFS_SUPER_MAGIC, "XFS", "xfs");
}

void XfsCheckpointer::checkpoint(uint64_t seq, filestore::CheckpointSteps &steps) {
  // Data files and metadata must both be on disk before the seq says so:
  // once it is, the host trims its journal up to seq.
  steps.flush_metadata();
  steps.sync_files();
  steps.record_seq(seq, /*sync=*/true);
}

uint64_t XfsCheckpointer::capabilities(bool reflink_works) const {
  // Not EXACT_REPLAY: a crash leaves files ahead of the metadata, so the
  // host keeps its checkpoint barrier after CLONE transactions.
  return STRATA_OS_CAP_STAGED_WRITES | (reflink_works ? STRATA_OS_CAP_CHEAP_CLONE : 0);
}

}  // namespace strata::xfs
