// Plugin `btrfs` (libstrata_backend_btrfs.so): objects as files in a btrfs
// subvolume, metadata in RocksDB or LevelDB, checkpoints as snapshots with
// rollback on open. All of the store is filestore code; this file only picks
// the BtrfsCheckpointer and declares the plugin.
#include <memory>

#include "btrfs_checkpointer.h"
#include "filestore/filestore.h"
#include "filestore/options.h"
#include "strata/cpp/objectstore.hpp"

namespace strata::btrfs {
namespace {

class BtrfsBackend {
 public:
  static void mkfs(const sdk::OpenArgs &args) {
    BtrfsCheckpointer checkpointer;
    filestore::FileStore::mkfs(args, checkpointer);
  }
  static std::unique_ptr<sdk::ObjectStore> open(const sdk::OpenArgs &args) {
    return filestore::FileStore::open(args, std::make_unique<BtrfsCheckpointer>());
  }
};

const strata_option_spec kOptions[] = {filestore::kMetaEngineOption, filestore::kFdCacheOption,
                                       filestore::kMetaCacheOption, filestore::kCsumBlockOption};

}  // namespace
}  // namespace strata::btrfs

STRATA_OBJECTSTORE_PLUGIN(
    strata::btrfs::BtrfsBackend, "btrfs", "0.1.0",
    "objects as files in a btrfs subvolume, snapshot checkpoints with rollback",
    strata::btrfs::kOptions)
