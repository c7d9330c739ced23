// The kv object store: every part of every object in one RocksDB or LevelDB
// database (layout in key_layout.h), one host transaction = one atomic
// write batch that also records the transaction's seq.
//
// Durability. A batch carries its seq, so the database's durable state is
// always a prefix of applied transactions and knows exactly which one it
// ends with: replay skips seqs <= the stored one (STRATA_OS_CAP_EXACT_REPLAY).
//   - Journaled (no STRATA_TXN_SYNC): RocksDB writes skip the WAL, the host's
//     journal covers them until checkpoint() flushes the memtables.
//   - Journal-less (STRATA_TXN_SYNC): written with the WAL and fsync'ed
//     before apply() returns (STRATA_OS_CAP_SELF_DURABLE).
//
// Threading (objectstore.h): apply/checkpoint from one host thread; reads
// from any thread. The only state shared between them is atomic.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "kvdb/kvdb.h"
#include "strata/cpp/objectstore.hpp"

namespace strata::kv {

class KvStore final : public sdk::ObjectStore {
 public:
  static void mkfs(const sdk::OpenArgs &args);
  static std::unique_ptr<KvStore> open(const sdk::OpenArgs &args);

  uint64_t capabilities() const override;
  void apply(const strata_txn &txn) override;
  void checkpoint(uint64_t seq) override;
  uint64_t committed_seq() override { return durable_seq_.load(); }

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

  // Reads and writes that found a block failing its checksum since open;
  // each one is also logged as an error naming the object and the block.
  // Served as STRATA_OS_CTL_CHECKSUM_FAILURES; none without checksums.
  std::optional<uint64_t> checksum_failures() const override {
    if (!csum_block_) return std::nullopt;
    return csum_failures_.load();
  }

 private:
  KvStore(std::string path, std::unique_ptr<kvdb::Database> db, sdk::Logger log);

  // Throws Error(ENOENT) naming the object if it does not exist.
  uint64_t object_size(std::string_view coll, std::string_view oid) const;
  bool object_exists(std::string_view coll, std::string_view oid) const;
  // Visits [prefix + start_after, upper) minus the key equal to the start.
  void scan_suffixes(const std::string &prefix, std::string_view start_after,
                     const std::string &upper, uint64_t limit, const sdk::KvVisitor &v) const;

  std::string path_;
  std::unique_ptr<kvdb::Database> db_;
  sdk::Logger log_;
  // Counts and logs a checksum failure on `what` (an object), then rethrows.
  [[noreturn]] void checksum_failed(const sdk::Error &e) const;

  uint64_t chunk_size_ = 0;
  uint64_t csum_block_ = 0;  // 0: a store made before checksums
  mutable std::atomic<uint64_t> csum_failures_{0};
  // Seq of the last applied transaction (as stored in the database).
  uint64_t applied_seq_ = 0;
  // Seq up to which the applied state is known durable.
  std::atomic<uint64_t> durable_seq_{0};
  std::atomic<uint64_t> objects_{0};
};

}  // namespace strata::kv
