// What the xfs and btrfs backends do differently: which file system they
// accept, where the live store lives, how a checkpoint is made durable and
// what open() restores. Everything else (object layout, metadata, op
// semantics, staged writes, fsck) is shared FileStore code.
#pragma once

#include <cstdint>
#include <string>

namespace strata::filestore {

// The building blocks of a checkpoint, in whatever order the Checkpointer
// needs them. Provided by FileStore; called on the apply thread.
class CheckpointSteps {
 public:
  // Makes every metadata write so far durable (memtables written out, log
  // synced).
  virtual void flush_metadata() = 0;
  // Stores `seq` as the committed seq in the metadata database; with `sync`
  // the write is durable when this returns.
  virtual void record_seq(uint64_t seq, bool sync) = 0;
  // syncfs(2) on the file system of the live area: data files, directories
  // and the metadata database files.
  virtual void sync_files() = 0;

 protected:
  ~CheckpointSteps() = default;
};

class Checkpointer {
 public:
  virtual ~Checkpointer() = default;

  // Name of the backend ("xfs"); recorded at mkfs so that open refuses a
  // store made by another backend.
  virtual const char *backend_name() const = 0;

  // Throws Error(EINVAL) naming the path and the file system found unless
  // `root` is on a file system this backend works on.
  virtual void check_file_system(const std::string &root) const = 0;

  // mkfs: prepares the area under `root` that holds data files and the
  // metadata database, and returns its path. Must be idempotent, so that an
  // interrupted mkfs can be run again.
  virtual std::string create_live_area(const std::string &root) = 0;
  // mkfs: the live area now holds an empty store whose database is closed,
  // with committed seq 0 recorded.
  virtual void finish_mkfs(const std::string &root) = 0;

  // open: returns the live area's path. A backend with rollback checkpoints
  // first restores it to the state of the last checkpoint.
  virtual std::string open_live_area(const std::string &root) = 0;

  // Makes everything applied so far durable and records `seq` as committed.
  // Called on the apply thread, never concurrently with apply.
  virtual void checkpoint(uint64_t seq, CheckpointSteps &steps) = 0;

  // STRATA_OS_CAP_* bits; `reflink_works` tells whether FICLONE succeeded
  // on this store's file system.
  virtual uint64_t capabilities(bool reflink_works) const = 0;
};

}  // namespace strata::filestore
