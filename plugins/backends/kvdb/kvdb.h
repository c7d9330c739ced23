// strata_kvdb: one small interface over RocksDB and LevelDB, shared by the
// object-store backends (kv keeps everything in it; xfs/btrfs keep omap and
// metadata in it).
//
//   auto db = kvdb::Database::open("/var/lib/strata/osd.0/db",
//                                  {.engine = kvdb::Engine::rocksdb});
//   kvdb::Transaction txn(*db);           // reads see its own pending writes
//   txn.put("k", "v");
//   std::string v;
//   txn.get("k", &v);                     // "v", before anything is written
//   txn.commit({.sync = true});           // one atomic write batch
//
// Keys are compared bytewise (unsigned), by both engines. Neither engine's
// headers are included here (pimpl), so users compile quickly.
//
// Errors: every failing call throws strata::sdk::Error with a negative errno
// (EIO for media errors, EUCLEAN for corruption, ENOSPC, ENOENT when opening
// a missing database, EINVAL for bad arguments) and a message naming the
// database path and, where there is one, the key.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvdb/key_encoding.h"

namespace strata::kvdb {

enum class Engine { rocksdb, leveldb };

// "rocksdb" | "leveldb"; throws Error(EINVAL) naming the accepted values.
Engine engine_from_name(std::string_view name);
const char *engine_name(Engine e);

struct OpenOptions {
  Engine engine = Engine::rocksdb;
  bool create_if_missing = true;
  bool error_if_exists = false;
  // Block cache for uncompressed blocks; 0 = the engine's default.
  size_t cache_bytes = 32u << 20;
  // Memtable size before it is written out; 0 = the engine's default.
  size_t write_buffer_bytes = 0;
  // Bloom filter bits per key (point gets of absent keys skip files); 0 = none.
  int bloom_bits_per_key = 10;
};

struct WriteOptions {
  // Write-ahead log fsync'ed before write() returns.
  bool sync = false;
  // RocksDB only: skip the write-ahead log (the caller journals elsewhere and
  // calls flush() to make the writes durable). LevelDB always logs.
  bool disable_wal = false;
};

// Bounds of an iteration; an empty string means "no bound".
struct IterOptions {
  std::string lower_bound;  // inclusive
  std::string upper_bound;  // exclusive
};

// Forward iteration in bytewise key order.
// Not thread-safe: one thread uses an iterator at a time. It reads a
// consistent view of the database taken when it was created. It must be
// destroyed before the Database (or Transaction) that created it.
class Iterator {
 public:
  virtual ~Iterator() = default;
  // Positions at the first key >= the lower bound.
  virtual void seek_to_first() = 0;
  // Positions at the first key >= max(target, lower bound).
  virtual void seek(std::string_view target) = 0;
  // False past the last key (or at the upper bound).
  virtual bool valid() const = 0;
  // REQUIRES: valid().
  virtual void next() = 0;
  // REQUIRES: valid(). The views stay valid until the next move.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
};

// An ordered list of writes applied atomically by Database::write(), in the
// order they were added. A plain value type: build it on any thread, hand it
// to write() once.
class Batch {
 public:
  enum class OpType : uint8_t { put, del, delete_range };
  struct Op {
    OpType type;
    std::string key;    // put/del: the key; delete_range: begin (inclusive)
    std::string value;  // put: the value; delete_range: end (exclusive)
  };

  void put(std::string_view key, std::string_view value);
  // Takes both strings without copying; only chosen for two std::string
  // rvalues (so that put("k", "v") is not ambiguous).
  void put(std::same_as<std::string> auto &&key, std::same_as<std::string> auto &&value) {
    put_owned(std::move(key), std::move(value));
  }
  void del(std::string_view key);
  // Removes every key in [begin, end); an empty `end` means "to the end of
  // the key space" (what keys::prefix_end returns when there is no bound).
  // Native on RocksDB; on LevelDB write() emulates it with point deletes of
  // the keys present at write time (and of any key an earlier op of this
  // batch put into the range).
  void delete_range(std::string_view begin, std::string_view end);

  bool empty() const { return ops_.empty(); }
  size_t count() const { return ops_.size(); }
  // Sum of key and value bytes.
  size_t byte_size() const { return bytes_; }
  const std::vector<Op> &ops() const { return ops_; }
  void clear();

 private:
  void put_owned(std::string &&key, std::string &&value);

  std::vector<Op> ops_;
  size_t bytes_ = 0;
};

// An open database. get/iterate/write/flush are thread-safe.
// Durable state is always a prefix of the writes: write() remembers writes
// made without the WAL and, before the next logged write, flushes them
// first, so a logged write is never durable while an earlier one is lost.
class Database {
 public:
  // Opens (creating if allowed) the database in directory `path`.
  // Throws Error(ENOENT) if it is missing and create_if_missing is false.
  static std::unique_ptr<Database> open(const std::string &path, const OpenOptions &options);

  // Closes; unflushed writes without WAL are written out by RocksDB's
  // shutdown flush. Errors at close are swallowed (use flush() first).
  virtual ~Database() = default;

  virtual Engine engine() const = 0;
  virtual const std::string &path() const = 0;

  // Stores the value of `key` into *value and returns true, or returns false
  // if the key is absent (*value untouched).
  virtual bool get(std::string_view key, std::string *value) const = 0;

  // A new iterator, not yet positioned (call seek/seek_to_first).
  virtual std::unique_ptr<Iterator> iterate(const IterOptions &options = {}) const = 0;

  // Applies every op of `batch` atomically.
  virtual void write(const Batch &batch, const WriteOptions &options) = 0;

  // Makes every previous write durable. RocksDB: writes the memtables out
  // if some writes skipped the WAL, and syncs the WAL; LevelDB: a synced
  // empty write (syncs the current log file), plus writing the memtables out
  // when an older, unsynced log file is still awaiting that.
  virtual void flush() = 0;

  // Compacts the whole key space (reclaims space after large deletes).
  virtual void compact() = 0;

  // Bytes of files in the database directory.
  uint64_t disk_bytes() const;
};

// A batch under construction whose reads see its own pending writes,
// layered over a Database: one transaction of many ops can read what its
// earlier ops wrote before anything is committed.
//
// Pending state is kept as a sorted map of key -> value-or-deleted plus the
// list of pending range deletes, so reads are O(log n) in the pending size.
// commit()/take_batch() turn the final state into a Batch: range deletes
// first, then the surviving puts/deletes (equivalent to replaying the ops in
// order, since a range delete erases the pending keys it covers).
//
// Not thread-safe: one thread owns a Transaction. The Database must outlive
// it. Iterators from iterate() must be destroyed before the next write to
// this Transaction.
class Transaction {
 public:
  explicit Transaction(Database &db);
  Transaction(const Transaction &) = delete;
  Transaction &operator=(const Transaction &) = delete;

  Database &db() const { return *db_; }

  // Pending value if the key was written in this transaction, else the
  // database's; false if absent (or deleted in this transaction).
  bool get(std::string_view key, std::string *value) const;
  // True if get() would find the key (without copying the value).
  bool contains(std::string_view key) const;
  // Iterates the merge of pending writes and the database.
  std::unique_ptr<Iterator> iterate(const IterOptions &options = {}) const;

  void put(std::string_view key, std::string_view value);
  // Takes both strings without copying (as Batch::put).
  void put(std::same_as<std::string> auto &&key, std::same_as<std::string> auto &&value) {
    put_owned(std::move(key), std::move(value));
  }
  void del(std::string_view key);
  // As Batch::delete_range: an empty `end` means no upper bound.
  void delete_range(std::string_view begin, std::string_view end);

  bool empty() const { return pending_.empty() && ranges_.empty(); }
  // Approximate bytes held by pending keys and values.
  size_t pending_bytes() const { return bytes_; }

  // Moves the pending state out as a Batch; the transaction becomes empty.
  Batch take_batch();
  // take_batch() + Database::write(). On failure the pending state is lost.
  void commit(const WriteOptions &options);
  void clear();

 private:
  friend class OverlayIterator;
  struct Range {
    std::string begin, end;  // [begin, end); end empty = unbounded
  };
  void put_owned(std::string &&key, std::string &&value);
  bool covered_by_range(std::string_view key) const;
  // Where a key covered by a pending range delete may continue: the end of
  // the covering range with the greatest end (empty = no end).
  const Range *covering_range(std::string_view key) const;

  Database *db_;
  // nullopt = deleted in this transaction.
  std::map<std::string, std::optional<std::string>, std::less<>> pending_;
  std::vector<Range> ranges_;
  size_t bytes_ = 0;
};

}  // namespace strata::kvdb
