// Binding a stage file as an object's data file (STRATA_OP_WRITE_STAGED)
// without copying the bytes.
#pragma once

#include <string>

#include "filestore/data_files.h"
#include "filestore/file_id.h"

namespace strata::filestore {

enum class BindMethod { reflink, copy };

// Makes data file `id` a fresh file holding the bytes of `stage_path`,
// replacing a file of that id. The extents are shared (FICLONE: XFS with
// reflink=1, btrfs, also across btrfs subvolumes), so no bytes move; only a
// file system without reflink gets a copy.
//
// Why not link or rename the stage file into place: the stage must keep its
// original bytes until a checkpoint covers the transaction, because replay
// binds it again. A replay can run with the index ahead of the op being
// replayed (LevelDB logs every batch; RocksDB flushes memtables on its own),
// and then earlier ops of the stream write into the file the index names
// today. If that file were the stage inode itself, the re-bind would no
// longer restore the staged bytes.
//
// Throws Error(ENOENT) if the stage file does not exist.
BindMethod bind_stage_file(const std::string &stage_path, DataFiles &data, FileId id);

}  // namespace strata::filestore
