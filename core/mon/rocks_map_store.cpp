// MapStore over RocksDB. Keys:
//   full/<epoch, 20 digits>   inc/<epoch>   auth/<entity>   meta/<key>
//   sys/last_epoch  sys/first_epoch          (decimal)
// Zero-padded epochs keep the keys in numeric order for the trim.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "mon/map_store.h"

namespace strata::mon {

namespace {

std::string epoch_key(const char *prefix, uint64_t epoch) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s/%020" PRIu64, prefix, epoch);
  return buf;
}

class RocksMapStore : public MapStore {
 public:
  RocksMapStore(std::string dir, std::unique_ptr<rocksdb::DB> db, uint64_t history)
      : dir_(std::move(dir)), db_(std::move(db)), history_(history) {
    last_ = read_u64("sys/last_epoch");
    first_ = read_u64("sys/first_epoch");
  }

  Status commit(const MapStoreUpdate &u) override {
    std::lock_guard lk(mu_);
    if (u.epoch != 0 && u.epoch != last_ + 1)
      return Status::Error(EINVAL, "map store " + dir_ + ": commit of epoch " +
                                       std::to_string(u.epoch) + " after epoch " +
                                       std::to_string(last_));
    rocksdb::WriteBatch batch;
    uint64_t first = first_;
    if (u.epoch != 0) {
      batch.Put(epoch_key("full", u.epoch), u.full);
      if (!u.incremental.empty()) batch.Put(epoch_key("inc", u.epoch), u.incremental);
      batch.Put("sys/last_epoch", std::to_string(u.epoch));
      if (first == 0) first = u.epoch;
      // Trim what falls out of the history window, in the same batch.
      while (history_ > 0 && u.epoch - first >= history_) {
        batch.Delete(epoch_key("full", first));
        batch.Delete(epoch_key("inc", first));
        ++first;
      }
      batch.Put("sys/first_epoch", std::to_string(first));
    }
    for (const auto &[k, v] : u.meta) v ? batch.Put("meta/" + k, *v) : batch.Delete("meta/" + k);
    for (const auto &[k, v] : u.auth) v ? batch.Put("auth/" + k, *v) : batch.Delete("auth/" + k);
    rocksdb::WriteOptions wo;
    wo.sync = true;
    rocksdb::Status s = db_->Write(wo, &batch);
    if (!s.ok())
      return Status::Error(EIO, "map store " + dir_ + ": commit of epoch " +
                                    std::to_string(u.epoch) + " failed: " + s.ToString());
    if (u.epoch != 0) {
      last_ = u.epoch;
      first_ = first;
    }
    return Status::OK();
  }

  uint64_t last_epoch() const override {
    std::lock_guard lk(mu_);
    return last_;
  }
  uint64_t first_epoch() const override {
    std::lock_guard lk(mu_);
    return first_;
  }

  Result<std::string> full_map(uint64_t epoch) const override {
    return get(epoch_key("full", epoch), "full map of epoch " + std::to_string(epoch));
  }
  Result<std::string> incremental(uint64_t epoch) const override {
    return get(epoch_key("inc", epoch), "incremental of epoch " + std::to_string(epoch));
  }

  std::map<std::string, std::string> auth_keys() const override {
    std::map<std::string, std::string> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->Seek("auth/"); it->Valid() && it->key().starts_with("auth/"); it->Next())
      out[it->key().ToString().substr(5)] = it->value().ToString();
    return out;
  }

  std::optional<std::string> meta(const std::string &key) const override {
    std::string v;
    if (!db_->Get(rocksdb::ReadOptions(), "meta/" + key, &v).ok()) return std::nullopt;
    return v;
  }

 private:
  Result<std::string> get(const std::string &key, const std::string &what) const {
    std::string v;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &v);
    if (s.IsNotFound()) return Status::Error(ENOENT, "map store " + dir_ + ": no " + what);
    if (!s.ok())
      return Status::Error(EIO, "map store " + dir_ + ": reading " + what + ": " + s.ToString());
    return v;
  }

  uint64_t read_u64(const std::string &key) const {
    std::string v;
    if (!db_->Get(rocksdb::ReadOptions(), key, &v).ok()) return 0;
    return std::strtoull(v.c_str(), nullptr, 10);
  }

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  uint64_t history_;
  mutable std::mutex mu_;
  uint64_t last_ = 0, first_ = 0;  // GUARDED_BY(mu_)
};

}  // namespace

Result<std::unique_ptr<MapStore>> open_rocks_map_store(const std::string &dir,
                                                       RocksMapStoreOptions opts) {
  std::error_code ec;
  bool exists = std::filesystem::exists(dir + "/CURRENT", ec);
  if (opts.create && exists)
    return Status::Error(EEXIST, "map store " + dir + " already exists (remove it to start over)");
  if (!opts.create && !exists)
    return Status::Error(ENOENT, "no map store in " + dir + " (run `strata mon --mkfs` first)");
  if (opts.create) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::Error(ec.value(), "creating " + dir + ": " + ec.message());
  }
  rocksdb::Options o;
  o.create_if_missing = opts.create;
  o.error_if_exists = opts.create;
  o.keep_log_file_num = 4;
  rocksdb::DB *raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, dir, &raw);
  if (!s.ok()) return Status::Error(EIO, "opening map store " + dir + ": " + s.ToString());
  return std::unique_ptr<MapStore>(
      std::make_unique<RocksMapStore>(dir, std::unique_ptr<rocksdb::DB>(raw), opts.history));
}

}  // namespace strata::mon
