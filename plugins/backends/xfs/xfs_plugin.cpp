// Plugin `xfs` (libstrata_backend_xfs.so): objects as files on XFS, metadata
// in RocksDB or LevelDB, write-ahead journaling by the host and syncfs
// checkpoints. All of the store is filestore code; this file only picks the
// XfsCheckpointer and declares the plugin.
#include <memory>

#include "filestore/filestore.h"
#include "filestore/options.h"
#include "strata/cpp/objectstore.hpp"
#include "xfs_checkpointer.h"

namespace strata::xfs {
namespace {

class XfsBackend {
 public:
  static void mkfs(const sdk::OpenArgs &args) {
    XfsCheckpointer checkpointer(args.option_bool("allow_any_fs", false));
    filestore::FileStore::mkfs(args, checkpointer);
  }
  static std::unique_ptr<sdk::ObjectStore> open(const sdk::OpenArgs &args) {
    return filestore::FileStore::open(
        args, std::make_unique<XfsCheckpointer>(args.option_bool("allow_any_fs", false)));
  }
};

const strata_option_spec kOptions[] = {filestore::kMetaEngineOption, filestore::kFdCacheOption,
                                       filestore::kMetaCacheOption, filestore::kAllowAnyFsOption,
                                       filestore::kCsumBlockOption};

}  // namespace
}  // namespace strata::xfs

STRATA_OBJECTSTORE_PLUGIN(
    strata::xfs::XfsBackend, "xfs", "0.1.0",
    "objects as files on XFS, metadata in RocksDB/LevelDB, syncfs checkpoints",
    strata::xfs::kOptions)
