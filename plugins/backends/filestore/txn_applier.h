// Applies one transaction's ops to the data files and the metadata database,
// with exactly the semantics of strata_op_type in objectstore.h.
//
// File changes happen as each op runs; metadata changes of all ops collect
// in one kvdb::Transaction (later ops read what earlier ops wrote) that is
// committed as one batch at the end. An op that creates a data file names it
// file_for_op(seq, op index, slot), so re-applying the op after a crash
// reuses the same file.
//
// Not thread-safe: one applier per transaction, on the apply thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "filestore/data_csums.h"
#include "filestore/data_files.h"
#include "filestore/meta_schema.h"
#include "filestore/record_cache.h"
#include "filestore/stage_area.h"
#include "kvdb/kvdb.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/objectstore.h"

namespace strata::filestore {

// Data file ids of op `index` of transaction `seq`: slot 0 for the object
// the op names, slot 1 for a CLONE's destination.
inline FileId file_for_op(uint64_t seq, uint32_t index, uint32_t slot = 0) {
  return {seq, index * 2 + slot};
}

class TxnApplier {
 public:
  // guard_clones: the store replays from a mixture of applied states (xfs,
  // no rollback), so CLONE needs the replay guard described at clone().
  // `cache` (may be null) serves records this transaction has not touched;
  // commit() updates it.
  // `csums` says how the store checksums data (data_csums.h).
  TxnApplier(kvdb::Database &db, DataFiles &data, StageArea &stage, const sdk::Logger &log,
             bool guard_clones, const CsumPolicy &csums, RecordCache *cache = nullptr);

  struct Outcome {
    int64_t object_delta = 0;  // change in the number of objects
    bool cloned = false;       // some op was a CLONE
  };
  // Applies every op in order to the files; their metadata stays pending
  // until commit(). Throws on media errors (the host then stops the store).
  Outcome apply_ops(const strata_txn &txn);
  // Commits the pending metadata as one batch without WAL: the host's
  // journal makes the transaction durable, checkpoints make the metadata so.
  void commit();
  // Commits the pending metadata together with `seq` as the committed seq,
  // synchronously: one atomic, durable write.
  void commit_durable_as(uint64_t seq);

 private:
  // The object an op works on, with its index record if it exists.
  struct Target {
    std::string_view coll;
    std::string_view oid;
    std::string key;
    std::optional<schema::ObjectRecord> record;
    // ensure() made the object (and its empty data file) for this op.
    bool created = false;
  };
  Target target(std::string_view coll, std::string_view oid) const;
  // The record, creating an empty object with data file `file` if missing.
  schema::ObjectRecord &ensure(Target &t, FileId file);
  void save(const Target &t);
  // Unlinks the data file, then drops the record, xattrs, omap and header.
  void remove_object(Target &t);
  SharedFd open_data(const Target &t);
  // Updates the checksums of t's data through `fn(DataCsumUpdater &)`, run
  // before the data file changes; nothing for a store without checksums.
  template <class Fn>
  void update_csums(const Target &t, int fd, Fn &&fn);

  void apply_op(const strata_op &op, uint64_t seq, uint32_t index);
  void make_collection(std::string_view coll);
  void remove_collection(std::string_view coll);
  void write(Target &t, uint64_t offset, std::string_view data, FileId fresh);
  void write_full(Target &t, std::string_view data, FileId fresh);
  void truncate(Target &t, uint64_t size, FileId fresh);
  void zero(Target &t, uint64_t offset, uint64_t length, FileId fresh);
  // With guard_clones, the destination file is published durably under its
  // final name (DataFiles::create_durably) and a replay that finds it reuses
  // it instead of cloning again: by then the source may already hold bytes
  // that later ops of the same transaction wrote.
  void clone(Target &src, std::string_view dst_name, FileId src_fresh, FileId dst_fresh);
  void write_staged(Target &t, uint64_t stage_id, uint64_t length, FileId fresh);
  void omap_remove_range(const Target &t, std::string_view begin, std::string_view end);
  // Deletes every key in r: point deletes for a few, a range delete for many.
  void erase_keys(const schema::KeyRange &r);
  // Copies every key of `from` to the same suffix under `to_prefix`.
  void copy_keys(const schema::KeyRange &from, const std::string &to_prefix);

  kvdb::Database &db_;
  DataFiles &data_;
  StageArea &stage_;
  const sdk::Logger &log_;
  const bool guard_clones_;
  const CsumPolicy &csums_;
  // After a successful commit: what this transaction did to records.
  void publish();

  kvdb::Transaction meta_;
  Outcome outcome_;
  RecordCache *cache_;
  // Records as this transaction left them (nullopt: removed), by key.
  std::unordered_map<std::string, std::optional<schema::ObjectRecord>> touched_;
  bool collection_removed_ = false;  // the cache is bypassed, then cleared
};

}  // namespace strata::filestore
