// FileStore: the object store shared by the xfs and btrfs backends.
//
// Object data lives in regular files (data_files.h) named by file ids derived
// from the creating op (file_id.h); the object index, xattrs, omap and omap
// headers live in a kvdb metadata database (meta_schema.h). A Checkpointer
// (checkpointer.h) supplies what differs per file system.
//
// Write path. apply() runs each op against the files directly (pwrite,
// ftruncate, fallocate, reflink) and collects the metadata changes of the
// whole transaction in one kvdb::Transaction, committed as one write batch
// without WAL at the end; nothing is fsync'ed. A 4 KiB overwrite is one index
// lookup and one pwrite through a cached descriptor, with no metadata write.
// Durability comes from the host's journal and from checkpoint().
//
// Replay. Every op is idempotent when a suffix of the transaction stream is
// re-applied in order (objectstore.h), also when the index is already ahead
// of the op being replayed: files created by an op are named by (seq, op
// index) and created truncated, so a replayed op re-creates the same, empty
// file; files are unlinked before their index entries are deleted; missing
// files of indexed objects are re-created empty and refilled by the replayed
// ops; staged writes are reflinked from a stage file that stays pristine
// until the next checkpoint. A transaction at or below committed_seq() is
// skipped.
//
// CLONE reads another object, which in-place file updates cannot replay: the
// source may already hold bytes a later op wrote. Without rollback (xfs) a
// transaction containing a CLONE is therefore made durable inside apply():
// the clone's destination is published durably under its final name (and
// reused by a replay that finds it), then syncfs, then the metadata batch
// is committed together with the transaction's seq as committed seq. With
// rollback checkpoints (btrfs) replay is exact and none of this is needed.
//
// Threading: as objectstore.h. apply/checkpoint on one thread; reads from any
// thread; stage_write concurrently with apply.
#pragma once

#include <atomic>
#include <memory>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "filestore/checkpointer.h"
#include "filestore/data_csums.h"
#include "filestore/data_files.h"
#include "filestore/meta_schema.h"
#include "filestore/options.h"
#include "filestore/posix_file.h"
#include "filestore/record_cache.h"
#include "filestore/stage_area.h"
#include "kvdb/kvdb.h"
#include "strata/cpp/objectstore.hpp"

namespace strata::filestore {

class FileStore final : public sdk::ObjectStore {
 public:
  // Creates an empty store at args.path(). Throws Error(EEXIST) if one is
  // already there.
  static void mkfs(const sdk::OpenArgs &args, Checkpointer &checkpointer);
  static std::unique_ptr<FileStore> open(const sdk::OpenArgs &args,
                                         std::unique_ptr<Checkpointer> checkpointer);
  ~FileStore() override;

  uint64_t capabilities() const override { return capabilities_; }
  void apply(const strata_txn &txn) override;
  void checkpoint(uint64_t seq) override;
  uint64_t committed_seq() override { return committed_seq_.load(); }

  uint64_t read(std::string_view coll, std::string_view oid, uint64_t off, uint64_t len,
                void *buf) override;
  strata_object_stat stat(std::string_view coll, std::string_view oid) override;
  bool getxattr(std::string_view coll, std::string_view oid, std::string_view name,
                std::string &value) override;
  void getxattrs(std::string_view coll, std::string_view oid, const sdk::KvVisitor &v) override;
  std::string omap_get_header(std::string_view coll, std::string_view oid) override;
  bool omap_get(std::string_view coll, std::string_view oid, std::string_view key,
                std::string &value) override;
  void omap_iterate(std::string_view coll, std::string_view oid, std::string_view start_after,
                    std::string_view end, uint64_t limit, const sdk::KvVisitor &v) override;
  void list_objects(std::string_view coll, std::string_view start_after, uint64_t limit,
                    const sdk::NameVisitor &v) override;
  void list_collections(const sdk::NameVisitor &v) override;
  strata_store_usage usage() override;
  int64_t fsck() override;

  uint64_t stage_write(const void *data, size_t len) override;
  void stage_release_unused() override;
  void stage_release(uint64_t id) override;

  // Reads and writes that found data failing its checksum (or missing)
  // since open; each one is also logged as an error naming the object.
  // Served as STRATA_OS_CTL_CHECKSUM_FAILURES; none without checksums.
  std::optional<uint64_t> checksum_failures() const override {
    if (!(capabilities_ & STRATA_OS_CAP_DATA_CHECKSUMS)) return std::nullopt;
    return csum_failures_.load();
  }
  // The checksum block size; 0 for a store made before checksums.
  uint64_t csum_block_size() const { return csums_.block; }

 private:
  class Steps;
  FileStore(std::string root, std::string live, UniqueFd lock,
            std::unique_ptr<Checkpointer> checkpointer, const FileStoreOptions &options,
            std::unique_ptr<kvdb::Database> db, const strata_host_services *host);
  // The object's index record; throws Error(ENOENT) naming the object when
  // it is not in the index.
  schema::ObjectRecord locate(std::string_view coll, std::string_view oid) const;
  // Reads the checksum configuration recorded at mkfs and whether the last
  // close was clean (part of construction).
  void open_checksums(const FileStoreOptions &options);
  // fsck: a line for each block of the object's data failing its checksum.
  std::vector<std::string> bad_blocks(const std::string &coll, const std::string &oid,
                                      const schema::ObjectRecord &rec) const;
  // Counts and logs a read of damaged data, then throws Error(EIO, what).
  [[noreturn]] void data_damaged(const std::string &what) const;
  // Verifies blocks [a, e) of the object (bytes at `bytes`, e - a of them).
  void verify_blocks(std::string_view coll, std::string_view oid, const std::string &path,
                     uint64_t size, uint64_t a, uint64_t e, const char *bytes) const;

  const std::string root_;
  const std::string live_;
  UniqueFd lock_;  // exclusive flock on <root>/lock while open
  std::unique_ptr<Checkpointer> checkpointer_;
  sdk::Logger log_;
  std::unique_ptr<kvdb::Database> db_;
  DataFiles data_;
  StageArea stage_;
  RecordCache records_;  // apply thread only
  UniqueFd live_fd_;  // for syncfs
  uint64_t capabilities_ = 0;
  std::atomic<uint64_t> committed_seq_{0};
  std::atomic<uint64_t> n_objects_{0};
  mutable std::atomic<uint64_t> csum_failures_{0};
  CsumPolicy csums_;  // block and zero_crc fixed at open; verify_old on the apply thread
  // Set by apply, cleared by checkpoint: a close with nothing applied since
  // the last checkpoint is a clean one (schema::clean_close_key).
  bool dirty_since_checkpoint_ = false;
  // The last applied transaction held a CLONE (apply thread only): the host
  // checkpoints right after such a transaction, also in the middle of a
  // replay, so that checkpoint does not mean the replay has settled the files.
  bool last_txn_cloned_ = false;
  // Objects changed while verify_old is off (replay after a crash without
  // exact replay): their checksums are derived again from their settled data
  // files when verification comes back on (apply thread only).
  std::set<std::pair<std::string, std::string>> unsettled_;
  void resettle_checksums();
};

}  // namespace strata::filestore
