// KvStore: lifecycle and the write side.
#include "kv/kv_store.h"

#include <filesystem>

#include "kv/key_layout.h"
#include "kv/onode.h"
#include "kv/options.h"
#include "kv/store_dir.h"
#include "kv/txn_applier.h"

namespace strata::kv {

namespace {

constexpr uint64_t kFormatVersion = 1;

uint64_t read_meta(const kvdb::Database &db, std::string_view key) {
  std::string bytes;
  if (!db.get(key, &bytes))
    throw sdk::Error(EUCLEAN, db.path() + ": metadata key " + std::string(key.substr(1)) +
                                  " is missing (not a kv store, or mkfs did not finish)");
  return decode_u64(bytes, db.path() + ": metadata " + std::string(key.substr(1)));
}

}  // namespace

void KvStore::mkfs(const sdk::OpenArgs &args) {
  namespace fs = std::filesystem;
  const std::string path = args.path();
  if (path.empty()) throw sdk::Error(EINVAL, "kv mkfs: no path given");
  const StoreOptions opts = StoreOptions::from(args);

  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw sdk::Error(EIO, "kv mkfs: cannot create " + path + ": " + ec.message());
  if (read_engine_marker(path))
    throw sdk::Error(EEXIST, "kv mkfs: " + path + " already holds a kv store");
  const std::string db_dir = database_dir(path);
  if (fs::exists(db_dir, ec) && !fs::is_empty(db_dir, ec))
    throw sdk::Error(EEXIST, "kv mkfs: " + db_dir +
                                 " exists without a kv_engine marker (an interrupted mkfs?); "
                                 "remove it to retry");

  kvdb::OpenOptions db_opts = opts.database_options();
  db_opts.error_if_exists = true;
  auto db = kvdb::Database::open(db_dir, db_opts);
  kvdb::Batch meta_batch;
  meta_batch.put(meta::kFormat, encode_u64(kFormatVersion));
  meta_batch.put(meta::kChunkSize, encode_u64(opts.chunk_size));
  meta_batch.put(meta::kCsumBlock, encode_u64(opts.csum_block_size));
  meta_batch.put(meta::kSeq, encode_u64(0));
  meta_batch.put(meta::kObjects, encode_u64(0));
  db->write(meta_batch, {.sync = true});
  db.reset();
  // Last: only a store whose database is complete gets a marker.
  write_engine_marker(path, opts.engine);
}

std::unique_ptr<KvStore> KvStore::open(const sdk::OpenArgs &args) {
  const std::string path = args.path();
  const StoreOptions opts = StoreOptions::from(args);
  std::optional<kvdb::Engine> engine = read_engine_marker(path);
  if (!engine) throw sdk::Error(ENOENT, "kv open: no kv store at " + path + " (run mkfs first)");
  if (*engine != opts.engine)
    throw sdk::Error(EINVAL, "kv open: the store at " + path +
                                 " was created with kv_engine=" + kvdb::engine_name(*engine) +
                                 " but kv_engine=" + kvdb::engine_name(opts.engine) +
                                 " is configured");

  kvdb::OpenOptions db_opts = opts.database_options();
  db_opts.create_if_missing = false;
  auto db = kvdb::Database::open(database_dir(path), db_opts);

  if (uint64_t format = read_meta(*db, meta::kFormat); format != kFormatVersion)
    throw sdk::Error(EUCLEAN, "kv open: " + path + " has format " + std::to_string(format) +
                                  ", this plugin reads format " + std::to_string(kFormatVersion));
  // What recovery found may still sit only in the page cache (a process
  // crash loses nothing, an OS crash would): make it durable before
  // reporting it as committed.
  db->flush();

  std::unique_ptr<KvStore> store(new KvStore(path, std::move(db), sdk::Logger(args.host())));
  store->chunk_size_ = read_meta(*store->db_, meta::kChunkSize);
  if (store->chunk_size_ == 0) throw sdk::Error(EUCLEAN, "kv open: " + path + ": chunk size 0");
  if (store->chunk_size_ != opts.chunk_size)
    store->log_.log(STRATA_LOG_INFO,
                    "kv %s: using chunk size %llu fixed at mkfs (kv_chunk_size=%llu applies to "
                    "new stores only)",
                    path.c_str(), static_cast<unsigned long long>(store->chunk_size_),
                    static_cast<unsigned long long>(opts.chunk_size));
  if (std::string bytes; store->db_->get(meta::kCsumBlock, &bytes)) {
    store->csum_block_ = decode_u64(bytes, path + ": metadata csum_block_size");
    if (store->csum_block_ != 0 && store->chunk_size_ % store->csum_block_ != 0)
      throw sdk::Error(EUCLEAN, "kv open: " + path + ": damaged csum_block_size");
  } else {
    store->log_.log(STRATA_LOG_WARN,
                    "kv %s was made before data checksums: its reads are not verified",
                    path.c_str());
  }
  store->applied_seq_ = read_meta(*store->db_, meta::kSeq);
  store->durable_seq_ = store->applied_seq_;
  store->objects_ = read_meta(*store->db_, meta::kObjects);
  return store;
}

KvStore::KvStore(std::string path, std::unique_ptr<kvdb::Database> db, sdk::Logger log)
    : path_(std::move(path)), db_(std::move(db)), log_(log) {}

uint64_t KvStore::capabilities() const {
  return STRATA_OS_CAP_EXACT_REPLAY | STRATA_OS_CAP_SELF_DURABLE |
         (csum_block_ ? STRATA_OS_CAP_DATA_CHECKSUMS : 0);
}

void KvStore::checksum_failed(const sdk::Error &e) const {
  uint64_t n = csum_failures_.fetch_add(1) + 1;
  log_.log(STRATA_LOG_ERROR, "kv %s: %s (%llu checksum failure%s since open)", path_.c_str(),
           e.what(), static_cast<unsigned long long>(n), n == 1 ? "" : "s");
  throw e;
}

void KvStore::apply(const strata_txn &txn) {
  // The database records the seq of the last batch it holds: anything at or
  // below it is a replay of a transaction already applied.
  if (txn.seq <= applied_seq_) return;

  kvdb::Transaction batch(*db_);
  TxnApplier applier(batch, chunk_size_, csum_block_);
  const sdk::TxnOps ops(txn);
  for (size_t i = 0; i < ops.size(); ++i) {
    try {
      applier.apply(ops[i]);
    } catch (const sdk::Error &e) {
      sdk::Error err(e.code(), "kv " + path_ + ": txn " + std::to_string(txn.seq) + " op " +
                                   std::to_string(i) + ": " + e.what());
      if (e.code() == -EIO) checksum_failed(err);
      throw err;
    }
  }
  if (uint64_t bad = applier.poisoned_blocks(); bad != 0) {
    uint64_t n = csum_failures_.fetch_add(bad) + bad;
    log_.log(STRATA_LOG_ERROR,
             "kv %s: txn %llu changed part of %llu block(s) that fail their checksum: they stay "
             "unreadable until rewritten whole (%llu checksum failures since open)",
             path_.c_str(), static_cast<unsigned long long>(txn.seq),
             static_cast<unsigned long long>(bad), static_cast<unsigned long long>(n));
  }
  batch.put(meta::kSeq, encode_u64(txn.seq));
  uint64_t objects = objects_.load();
  if (int64_t delta = applier.objects_delta(); delta != 0) {
    objects = delta < 0 && static_cast<uint64_t>(-delta) > objects ? 0 : objects + delta;
    batch.put(meta::kObjects, encode_u64(objects));
  }

  // Journal-less stores ask for sync; otherwise the host's journal makes the
  // transaction durable and RocksDB can skip its own log.
  const bool sync = txn.flags & STRATA_TXN_SYNC;
  batch.commit({.sync = sync, .disable_wal = !sync});

  applied_seq_ = txn.seq;
  objects_ = objects;
  if (sync) durable_seq_ = txn.seq;
}

void KvStore::checkpoint(uint64_t seq) {
  if (seq > applied_seq_) {
    kvdb::Batch b;
    b.put(meta::kSeq, encode_u64(seq));
    db_->write(b, {.disable_wal = true});
    applied_seq_ = seq;
  }
  db_->flush();
  durable_seq_ = applied_seq_;
}

}  // namespace strata::kv
