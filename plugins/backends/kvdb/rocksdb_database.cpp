// Database over RocksDB.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <mutex>

#include "kvdb/engines.h"

namespace strata::kvdb::detail {

namespace {

rocksdb::Slice to_slice(std::string_view s) { return {s.data(), s.size()}; }
std::string_view to_view(const rocksdb::Slice &s) { return {s.data(), s.size()}; }

int errno_of(const rocksdb::Status &s) {
  if (s.IsNotFound()) return ENOENT;
  if (s.IsCorruption()) return EUCLEAN;
  if (s.IsNoSpace()) return ENOSPC;
  if (s.IsInvalidArgument()) return EINVAL;
  if (s.IsNotSupported()) return EOPNOTSUPP;
  if (s.IsBusy() || s.IsTryAgain()) return EBUSY;
  return EIO;
}

void check(const rocksdb::Status &s, const std::string &path, std::string_view what,
           const std::string_view *key = nullptr) {
  if (!s.ok()) throw_db_error(errno_of(s), Engine::rocksdb, path, what, s.ToString(), key);
}

class RocksIterator final : public Iterator {
 public:
  RocksIterator(rocksdb::DB &db, const std::string &path, const IterOptions &options)
      : path_(path), lower_(options.lower_bound), upper_(options.upper_bound) {
    rocksdb::ReadOptions ro;
    // The slices point into this object's strings, which outlive the iterator.
    lower_slice_ = to_slice(lower_);
    upper_slice_ = to_slice(upper_);
    if (!lower_.empty()) ro.iterate_lower_bound = &lower_slice_;
    if (!upper_.empty()) ro.iterate_upper_bound = &upper_slice_;
    it_.reset(db.NewIterator(ro));
  }

  void seek_to_first() override {
    if (lower_.empty())
      it_->SeekToFirst();
    else
      it_->Seek(lower_slice_);
    check_status("seek_to_first");
  }
  void seek(std::string_view target) override {
    it_->Seek(target < std::string_view(lower_) ? lower_slice_ : to_slice(target));
    check_status("seek", &target);
  }
  bool valid() const override { return it_->Valid(); }
  void next() override {
    it_->Next();
    check_status("next");
  }
  std::string_view key() const override { return to_view(it_->key()); }
  std::string_view value() const override { return to_view(it_->value()); }

 private:
  void check_status(std::string_view what, const std::string_view *key = nullptr) {
    if (!it_->Valid()) check(it_->status(), path_, std::string("iterator ").append(what), key);
  }

  const std::string &path_;
  std::string lower_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

class RocksDatabase final : public Database {
 public:
  RocksDatabase(std::string path, std::unique_ptr<rocksdb::DB> db)
      : path_(std::move(path)), db_(std::move(db)) {}

  ~RocksDatabase() override {
    // Close() flushes unlogged memtables (avoid_flush_during_shutdown is off);
    // a failure here cannot be reported, flush() is the way to see errors.
    if (db_) (void)db_->Close();
  }

  Engine engine() const override { return Engine::rocksdb; }
  const std::string &path() const override { return path_; }

  bool get(std::string_view key, std::string *value) const override {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), to_slice(key), value);
    if (s.IsNotFound()) return false;
    check(s, path_, "get", &key);
    return true;
  }

  std::unique_ptr<Iterator> iterate(const IterOptions &options) const override {
    return std::make_unique<RocksIterator>(*db_, path_, options);
  }

  void write(const Batch &batch, const WriteOptions &options) override {
    // A logged write must not become durable while earlier unlogged ones can
    // still be lost: write those out first (keeps durable state a prefix).
    if (!options.disable_wal && unlogged_.load()) flush_memtables();

    rocksdb::WriteBatch wb(0, 0, 0, 0);
    for (const Batch::Op &op : batch.ops()) {
      rocksdb::Status s;
      switch (op.type) {
        case Batch::OpType::put:
          s = wb.Put(to_slice(op.key), to_slice(op.value));
          break;
        case Batch::OpType::del:
          s = wb.Delete(to_slice(op.key));
          break;
        case Batch::OpType::delete_range:
          s = op.value.empty() ? delete_to_end(wb, op.key)
                               : wb.DeleteRange(to_slice(op.key), to_slice(op.value));
          break;
      }
      std::string_view key = op.key;
      check(s, path_, "batch", &key);
    }
    rocksdb::WriteOptions wo;
    wo.sync = options.sync;
    wo.disableWAL = options.disable_wal;
    check(db_->Write(wo, &wb), path_, "write");
    if (options.disable_wal)
      unlogged_.store(true);
    else if (!options.sync)
      wal_unsynced_.store(true);
  }

  void flush() override {
    if (unlogged_.load()) flush_memtables();
    if (wal_unsynced_.exchange(false)) check(db_->SyncWAL(), path_, "sync wal");
  }

  void compact() override {
    rocksdb::CompactRangeOptions co;
    check(db_->CompactRange(co, nullptr, nullptr), path_, "compact");
  }

 private:
  void flush_memtables() {
    // Cleared before flushing: a write racing with us either lands in the
    // memtable being flushed or sets the flag again for the next flush.
    unlogged_.store(false);
    rocksdb::FlushOptions fo;
    fo.wait = true;
    fo.allow_write_stall = true;
    rocksdb::Status s = db_->Flush(fo);
    if (!s.ok()) {
      unlogged_.store(true);
      check(s, path_, "flush memtables");
    }
  }

  // DeleteRange needs an end key; "to the end" becomes point deletes.
  rocksdb::Status delete_to_end(rocksdb::WriteBatch &wb, const std::string &begin) {
    RocksIterator it(*db_, path_, IterOptions{begin, {}});
    for (it.seek_to_first(); it.valid(); it.next()) {
      rocksdb::Status s = wb.Delete(to_slice(it.key()));
      if (!s.ok()) return s;
    }
    return rocksdb::Status::OK();
  }

  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::atomic<bool> unlogged_{false};      // writes without WAL since the last memtable flush
  std::atomic<bool> wal_unsynced_{false};  // logged writes not yet fsync'ed
};

}  // namespace

std::unique_ptr<Database> open_rocksdb(const std::string &path, const OpenOptions &options) {
  rocksdb::Options o;
  o.create_if_missing = options.create_if_missing;
  o.error_if_exists = options.error_if_exists;
  // The OSD host shares few cores with other daemons; two background jobs
  // keep compaction going without starving the write path.
  o.max_background_jobs = 2;
  o.keep_log_file_num = 4;
  if (options.write_buffer_bytes) o.write_buffer_size = options.write_buffer_bytes;
  // No compression where data is young: levels 0 and 1 are written at
  // every checkpoint's flush and rewritten by the compactions soon after,
  // and snappy there was ~4% of an OSD's CPU in a small-file untar.
  // Deeper, long-lived levels use LZ4, a cheap codec that still shrinks text.
  o.compression_per_level = {rocksdb::kNoCompression, rocksdb::kNoCompression,
                             rocksdb::kLZ4Compression};

  rocksdb::BlockBasedTableOptions table;
  if (options.cache_bytes) table.block_cache = rocksdb::NewLRUCache(options.cache_bytes);
  if (options.bloom_bits_per_key > 0)
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(options.bloom_bits_per_key, false));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::DB *raw = nullptr;
  check(rocksdb::DB::Open(o, path, &raw), path, "open");
  return std::make_unique<RocksDatabase>(path, std::unique_ptr<rocksdb::DB>(raw));
}

}  // namespace strata::kvdb::detail
