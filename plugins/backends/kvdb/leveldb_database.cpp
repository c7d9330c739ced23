// Database over LevelDB. LevelDB has no iterator bounds and no range delete:
// both are emulated here.
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <mutex>

#include "kvdb/engines.h"

namespace strata::kvdb::detail {

namespace {

leveldb::Slice to_slice(std::string_view s) { return {s.data(), s.size()}; }
std::string_view to_view(const leveldb::Slice &s) { return {s.data(), s.size()}; }

int errno_of(const leveldb::Status &s) {
  if (s.IsNotFound()) return ENOENT;
  if (s.IsCorruption()) return EUCLEAN;
  if (s.IsInvalidArgument()) return EINVAL;
  if (s.IsNotSupportedError()) return EOPNOTSUPP;
  return EIO;
}

void check(const leveldb::Status &s, const std::string &path, std::string_view what,
           const std::string_view *key = nullptr) {
  if (!s.ok()) throw_db_error(errno_of(s), Engine::leveldb, path, what, s.ToString(), key);
}

bool in_range(std::string_view key, std::string_view begin, std::string_view end) {
  return key >= begin && (end.empty() || key < end);
}

class LevelIterator final : public Iterator {
 public:
  LevelIterator(leveldb::DB &db, const std::string &path, const IterOptions &options)
      : path_(path), lower_(options.lower_bound), upper_(options.upper_bound) {
    it_.reset(db.NewIterator(leveldb::ReadOptions()));
  }

  void seek_to_first() override {
    if (lower_.empty())
      it_->SeekToFirst();
    else
      it_->Seek(to_slice(lower_));
    check_status("seek_to_first");
  }
  void seek(std::string_view target) override {
    it_->Seek(to_slice(target < std::string_view(lower_) ? std::string_view(lower_) : target));
    check_status("seek", &target);
  }
  bool valid() const override {
    return it_->Valid() && (upper_.empty() || to_view(it_->key()) < std::string_view(upper_));
  }
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
  std::unique_ptr<leveldb::Iterator> it_;
};

class LevelDatabase final : public Database {
 public:
  LevelDatabase(std::string path, std::unique_ptr<leveldb::Cache> cache,
                std::unique_ptr<const leveldb::FilterPolicy> filter)
      : path_(std::move(path)), cache_(std::move(cache)), filter_(std::move(filter)) {}

  ~LevelDatabase() override { db_.reset(); }  // before the cache and filter it uses

  void set_db(std::unique_ptr<leveldb::DB> db) { db_ = std::move(db); }

  Engine engine() const override { return Engine::leveldb; }
  const std::string &path() const override { return path_; }

  bool get(std::string_view key, std::string *value) const override {
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), to_slice(key), value);
    if (s.IsNotFound()) return false;
    check(s, path_, "get", &key);
    return true;
  }

  std::unique_ptr<Iterator> iterate(const IterOptions &options) const override {
    return std::make_unique<LevelIterator>(*db_, path_, options);
  }

  void write(const Batch &batch, const WriteOptions &options) override {
    // Held across the range-delete scan and the write, so that no other
    // write can slip a key into a range between the two.
    std::lock_guard lock(write_mu_);
    leveldb::WriteBatch wb;
    const auto &ops = batch.ops();
    for (size_t i = 0; i < ops.size(); ++i) {
      const Batch::Op &op = ops[i];
      switch (op.type) {
        case Batch::OpType::put:
          wb.Put(to_slice(op.key), to_slice(op.value));
          break;
        case Batch::OpType::del:
          wb.Delete(to_slice(op.key));
          break;
        case Batch::OpType::delete_range:
          emulate_delete_range(wb, ops, i);
          break;
      }
    }
    leveldb::WriteOptions wo;
    wo.sync = options.sync;
    check(db_->Write(wo, &wb), path_, "write");
  }

  void flush() override {
    // Every write went to the log; a synced empty write fsyncs the current
    // log file.
    {
      std::lock_guard lock(write_mu_);
      leveldb::WriteBatch empty;
      leveldb::WriteOptions wo;
      wo.sync = true;
      check(db_->Write(wo, &empty), path_, "flush");
    }
    // LevelDB closes a full log without fsync when it switches memtables and
    // deletes it once that memtable sits in a synced table file. While such
    // an older log exists, our fsync of the current one does not cover it:
    // wait for the memtables to be written out. Compacting the empty key
    // range touches no table file, only the memtables.
    if (count_log_files() > 1) {
      leveldb::Slice none("");
      db_->CompactRange(&none, &none);
    }
  }

  void compact() override { db_->CompactRange(nullptr, nullptr); }

 private:
  // Point deletes for the keys in the range now in the database, and for the
  // keys earlier ops of this batch put there.
  void emulate_delete_range(leveldb::WriteBatch &wb, const std::vector<Batch::Op> &ops,
                            size_t index) {
    const Batch::Op &range = ops[index];
    for (size_t j = 0; j < index; ++j)
      if (ops[j].type == Batch::OpType::put && in_range(ops[j].key, range.key, range.value))
        wb.Delete(to_slice(ops[j].key));
    LevelIterator it(*db_, path_, IterOptions{range.key, range.value});
    for (it.seek_to_first(); it.valid(); it.next()) wb.Delete(to_slice(it.key()));
  }

  size_t count_log_files() const {
    std::error_code ec;
    size_t n = 0;
    for (std::filesystem::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec))
      n += it->path().extension() == ".log";
    return n;
  }

  std::string path_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;
  std::mutex write_mu_;
};

}  // namespace

std::unique_ptr<Database> open_leveldb(const std::string &path, const OpenOptions &options) {
  std::unique_ptr<leveldb::Cache> cache(
      options.cache_bytes ? leveldb::NewLRUCache(options.cache_bytes) : nullptr);
  std::unique_ptr<const leveldb::FilterPolicy> filter(
      options.bloom_bits_per_key > 0 ? leveldb::NewBloomFilterPolicy(options.bloom_bits_per_key)
                                     : nullptr);
  leveldb::Options o;
  o.create_if_missing = options.create_if_missing;
  o.error_if_exists = options.error_if_exists;
  o.block_cache = cache.get();
  o.filter_policy = filter.get();
  if (options.write_buffer_bytes) o.write_buffer_size = options.write_buffer_bytes;

  auto database = std::make_unique<LevelDatabase>(path, std::move(cache), std::move(filter));
  leveldb::DB *raw = nullptr;
  check(leveldb::DB::Open(o, path, &raw), path, "open");
  database->set_db(std::unique_ptr<leveldb::DB>(raw));
  return database;
}

}  // namespace strata::kvdb::detail
