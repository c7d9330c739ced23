// FileStore lifecycle (mkfs, open, close), the write side (apply,
// checkpoint, staged writes) and usage. Reads are in filestore_read.cpp,
// fsck in filestore_fsck.cpp.
#include "filestore/filestore.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <string>
#include <vector>

#include "checksum/block_checksums.h"
#include "filestore/file_data.h"
#include "filestore/names.h"
#include "filestore/store_layout.h"
#include "filestore/txn_applier.h"

namespace strata::filestore {
namespace {

std::string require_path(const sdk::OpenArgs &args) {
  std::string path = args.path();
  if (path.empty()) throw sdk::Error(EINVAL, "no store path given");
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

kvdb::OpenOptions db_options(kvdb::Engine engine, const FileStoreOptions &opts, bool create) {
  kvdb::OpenOptions o;
  o.engine = engine;
  o.create_if_missing = create;
  o.cache_bytes = opts.meta_cache_bytes;
  return o;
}

uint64_t read_committed_seq(const kvdb::Database &db) {
  std::string bytes;
  if (!db.get(schema::committed_seq_key(), &bytes))
    throw sdk::Error(EUCLEAN, "metadata database " + db.path() + " has no committed seq");
  auto seq = schema::decode_u64(bytes);
  if (!seq) throw sdk::Error(EUCLEAN, "metadata database " + db.path() + ": damaged committed seq");
  return *seq;
}

void check_format(const kvdb::Database &db) {
  std::string format;
  if (!db.get(schema::format_key(), &format))
    throw sdk::Error(EUCLEAN, "metadata database " + db.path() + " has no format record");
  if (format != schema::kFormat)
    throw sdk::Error(EINVAL, "metadata database " + db.path() + " has format '" + format +
                                 "', this plugin reads '" + std::string(schema::kFormat) + "'");
}

uint64_t count_objects(const kvdb::Database &db) {
  schema::KeyRange r = schema::all_objects();
  auto it = db.iterate({r.begin, r.end});
  uint64_t n = 0;
  for (it->seek_to_first(); it->valid(); it->next()) ++n;
  return n;
}

// Whether FICLONE works on the file system of `dir` (XFS needs reflink=1).
bool probe_reflink(const std::string &dir) {
  std::string src = dir + "/reflink-probe.src", dst = dir + "/reflink-probe.dst";
  bool works = false;
  {
    UniqueFd a = open_file(src, O_RDWR | O_CREAT | O_TRUNC);
    UniqueFd b = open_file(dst, O_RDWR | O_CREAT | O_TRUNC);
    std::vector<char> block(4096, 'r');
    pwrite_all(a.get(), block.data(), block.size(), 0, src);
    works = try_reflink(a.get(), b.get(), dst);
  }
  unlink_if_exists(src);
  unlink_if_exists(dst);
  return works;
}

// The descriptor cache may use at most a quarter of the process's open-file
// limit: the metadata database, the journal and the messenger need the rest.
size_t fd_cache_budget(size_t wanted) {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return wanted;
  size_t budget = std::max<size_t>(16, static_cast<size_t>(limit.rlim_cur / 4));
  return std::min(wanted, budget);
}

}  // namespace

// The checkpoint building blocks over this store's database and files.
class FileStore::Steps final : public CheckpointSteps {
 public:
  explicit Steps(FileStore &s) : s_(s) {}
  void flush_metadata() override { s_.db_->flush(); }
  void record_seq(uint64_t seq, bool sync) override {
    kvdb::Batch b;
    b.put(schema::committed_seq_key(), schema::encode_u64(seq));
    kvdb::WriteOptions wo;
    wo.sync = sync;
    wo.disable_wal = !sync;
    s_.db_->write(b, wo);
  }
  void sync_files() override { sync_file_system(s_.live_fd_.get(), s_.live_); }

 private:
  FileStore &s_;
};

void FileStore::mkfs(const sdk::OpenArgs &args, Checkpointer &checkpointer) {
  std::string root = require_path(args);
  make_dir(root);
  checkpointer.check_file_system(root);
  if (auto existing = layout::read_marker(root))
    throw sdk::Error(EEXIST, "a " + existing->backend + " store already exists at " + root);
  FileStoreOptions opts = FileStoreOptions::from(args);

  std::string live = checkpointer.create_live_area(root);
  DataFiles::create_layout(layout::data_dir(live));
  StageArea::create_layout(layout::stage_dir(root));
  {
    auto db = kvdb::Database::open(layout::meta_dir(live),
                                   db_options(opts.meta_engine, opts, /*create=*/true));
    kvdb::Batch b;
    b.put(schema::format_key(), schema::kFormat);
    b.put(schema::committed_seq_key(), schema::encode_u64(0));
    b.put(schema::csum_block_size_key(), schema::encode_u64(opts.csum_block_size));
    b.put(schema::clean_close_key(), "");
    kvdb::WriteOptions wo;
    wo.sync = true;
    db->write(b, wo);
  }
  UniqueFd live_fd = open_dir(live);
  sync_file_system(live_fd.get(), live);
  checkpointer.finish_mkfs(root);
  // Last: a store without its marker is an interrupted mkfs, which may run again.
  layout::write_marker(root, {checkpointer.backend_name(), kvdb::engine_name(opts.meta_engine)});
}

std::unique_ptr<FileStore> FileStore::open(const sdk::OpenArgs &args,
                                           std::unique_ptr<Checkpointer> checkpointer) {
  std::string root = require_path(args);
  checkpointer->check_file_system(root);
  auto marker = layout::read_marker(root);
  if (!marker) throw sdk::Error(ENOENT, "no store at " + root + " (run mkfs first)");
  if (marker->backend != checkpointer->backend_name())
    throw sdk::Error(EINVAL, "the store at " + root + " was made by the " + marker->backend +
                                 " backend, not " + checkpointer->backend_name());
  FileStoreOptions opts = FileStoreOptions::from(args);
  const size_t wanted_fds = opts.fd_cache_size;
  opts.fd_cache_size = fd_cache_budget(wanted_fds);
  // The engine is fixed at mkfs; the marker wins over the option.
  kvdb::Engine engine = kvdb::engine_from_name(marker->meta_engine);

  UniqueFd lock = layout::lock_store(root);
  std::string live = checkpointer->open_live_area(root);
  auto db = kvdb::Database::open(layout::meta_dir(live), db_options(engine, opts, false));
  check_format(*db);
  auto store = std::unique_ptr<FileStore>(new FileStore(
      root, live, std::move(lock), std::move(checkpointer), opts, std::move(db), args.host()));
  if (opts.fd_cache_size < wanted_fds)
    store->log_.log(STRATA_LOG_WARN,
                    "store %s: fd_cache_size lowered from %zu to %zu to fit the open-file limit",
                    root.c_str(), wanted_fds, opts.fd_cache_size);
  if (opts.meta_engine != engine)
    store->log_.log(STRATA_LOG_INFO, "store %s keeps its metadata in %s (meta_engine=%s ignored)",
                    root.c_str(), kvdb::engine_name(engine), kvdb::engine_name(opts.meta_engine));
  return store;
}

FileStore::FileStore(std::string root, std::string live, UniqueFd lock,
                     std::unique_ptr<Checkpointer> checkpointer, const FileStoreOptions &options,
                     std::unique_ptr<kvdb::Database> db, const strata_host_services *host)
    : root_(std::move(root)),
      live_(std::move(live)),
      lock_(std::move(lock)),
      checkpointer_(std::move(checkpointer)),
      log_(host),
      db_(std::move(db)),
      data_(layout::data_dir(live_), options.fd_cache_size),
      stage_(layout::stage_dir(root_)),
      live_fd_(open_dir(live_)) {
  committed_seq_ = read_committed_seq(*db_);
  n_objects_ = count_objects(*db_);
  bool reflink = probe_reflink(live_);
  capabilities_ = checkpointer_->capabilities(reflink);
  open_checksums(options);
  log_.log(STRATA_LOG_INFO,
           "%s store %s opened: committed seq %llu, %llu objects, metadata in %s, reflink %s",
           checkpointer_->backend_name(), root_.c_str(),
           static_cast<unsigned long long>(committed_seq_.load()),
           static_cast<unsigned long long>(n_objects_.load()), kvdb::engine_name(db_->engine()),
           reflink ? "yes" : "no");
}

void FileStore::open_checksums(const FileStoreOptions &options) {
  csums_.failures = &csum_failures_;
  csums_.log = &log_;
  std::string bytes;
  if (!db_->get(schema::csum_block_size_key(), &bytes)) {
    log_.log(STRATA_LOG_WARN,
             "store %s was made before data checksums: its reads are not verified (make a new "
             "store and let recovery fill it to get them)",
             root_.c_str());
  } else {
    auto block = schema::decode_u64(bytes);
    if (!block || (*block != 0 && !checksum::valid_block_size(*block)))
      throw sdk::Error(EUCLEAN, "metadata database " + db_->path() + ": damaged csum_block_size");
    csums_.block = *block;  // 0: made with csum_block_size = 0, no checksums
    if (*block != 0) {
      csums_.zero_crc = checksum::zero_block_crc(*block);
      capabilities_ |= STRATA_OS_CAP_DATA_CHECKSUMS;
    }
    if (options.csum_block_size != *block)
      log_.log(STRATA_LOG_INFO, "store %s checksums data in %llu-byte blocks (fixed at mkfs)",
               root_.c_str(), static_cast<unsigned long long>(*block));
  }
  // After a crash of a store without exact replay, the data files hold a
  // mixture of applied writes until the replayed ops have settled them (up
  // to the first checkpoint): partial-block writes then recompute checksums
  // without verifying the bytes they keep (data_csums.h).
  const bool clean = db_->get(schema::clean_close_key(), &bytes);
  if (!clean && !(capabilities_ & STRATA_OS_CAP_EXACT_REPLAY)) csums_.verify_old = false;
  if (clean) {
    kvdb::Batch b;
    b.del(schema::clean_close_key());
    kvdb::WriteOptions wo;
    wo.sync = true;
    db_->write(b, wo);
  }
}

FileStore::~FileStore() {
  data_.forget_all();
  if (!dirty_since_checkpoint_) {
    try {
      kvdb::Batch b;
      b.put(schema::clean_close_key(), "");
      kvdb::WriteOptions wo;
      wo.sync = true;
      db_->write(b, wo);
    } catch (const std::exception &e) {
      log_.log(STRATA_LOG_WARN, "store %s: cannot record the clean close: %s", root_.c_str(),
               e.what());
    }
  }
  db_.reset();
}

void FileStore::apply(const strata_txn &txn) {
  // Already durable (a checkpoint, or a CLONE transaction, recorded it).
  if (txn.seq <= committed_seq_.load()) return;
  const bool exact_replay = (capabilities_ & STRATA_OS_CAP_EXACT_REPLAY) != 0;
  dirty_since_checkpoint_ = true;
  TxnApplier applier(*db_, data_, stage_, log_, /*guard_clones=*/!exact_replay, csums_,
                     &records_);
  if (csums_.enabled() && !csums_.verify_old)
    for (const strata_op &op : sdk::ops_of(txn))
      if (op.object.len != 0) unsettled_.emplace(sdk::view(op.collection), sdk::view(op.object));
  TxnApplier::Outcome outcome = applier.apply_ops(txn);
  last_txn_cloned_ = outcome.cloned;
  if (outcome.cloned && !exact_replay) {
    // A CLONE reads another object, so replaying its transaction over files
    // that later ops already changed could copy the wrong bytes. Make the
    // whole transaction durable now, committed together with its seq, so it
    // is never replayed once its metadata exists (the host checkpoints right
    // after it anyway, which then finds nothing left to sync).
    sync_file_system(live_fd_.get(), live_);
    applier.commit_durable_as(txn.seq);
    committed_seq_ = txn.seq;
  } else {
    applier.commit();
  }
  n_objects_ += static_cast<uint64_t>(outcome.object_delta);  // wraps right for negatives
}

void FileStore::checkpoint(uint64_t seq) {
  // Every stage consumed so far belongs to a transaction this checkpoint
  // covers (apply and checkpoint share one thread).
  std::vector<uint64_t> consumed = stage_.consumed();
  // Replay, if any, has settled every file once the host checkpoints after
  // it; a checkpoint right after a CLONE may come in the middle of a replay
  // (store.cpp checkpoints after every replayed clone), while later replayed
  // ops still meet bytes that they will settle themselves.
  if (!csums_.verify_old && !last_txn_cloned_) {
    resettle_checksums();
    csums_.verify_old = true;
  }
  Steps steps(*this);
  checkpointer_->checkpoint(seq, steps);
  committed_seq_ = seq;
  dirty_since_checkpoint_ = false;
  stage_.drop_consumed(consumed);
}

// A replay that is not exact re-applies ops over data files that already
// hold some of their effects, so the checksums it computes along the way can
// describe bytes a later op of the crashed run had already replaced. Once the
// replay is over the files are right by construction (every journaled op has
// been applied again, in order): derive the checksums of every object the
// replay touched from its data file, in the checkpoint that ends the replay.
void FileStore::resettle_checksums() {
  if (unsettled_.empty()) return;
  kvdb::Transaction t(*db_);
  std::vector<char> buf;
  uint64_t n = 0;
  for (const auto &[coll, oid] : unsettled_) {
    std::string bytes;
    if (!db_->get(schema::object_key(coll, oid), &bytes)) continue;  // removed since
    auto rec = schema::ObjectRecord::decode(bytes);
    if (!rec) continue;  // reads and fsck report a damaged record
    const std::string path = data_.path(rec->file);
    UniqueFd fd = open_file_if_exists(path, O_RDONLY);
    if (!fd) continue;  // reads report the missing file as EIO
    buf.assign(rec->size, '\0');
    const size_t got = pread_full(fd.get(), buf.data(), buf.size(), 0, path);
    if (got < rec->size) continue;  // short: reads report it as EIO
    CsumEditor editor(t, coll, oid, csums_);
    DataCsumUpdater(editor, csums_, fd.get(), path, describe_object(coll, oid))
        .replace(buf.data(), buf.size());
    editor.flush();
    ++n;
  }
  kvdb::WriteOptions wo;
  wo.disable_wal = true;  // the checkpoint that follows makes it durable
  t.commit(wo);
  log_.log(STRATA_LOG_INFO, "store %s: checksums of %llu object(s) the replay touched derived "
           "again from their settled data files", root_.c_str(),
           static_cast<unsigned long long>(n));
  unsettled_.clear();
}

uint64_t FileStore::stage_write(const void *data, size_t len) {
  return stage_.write(data, len, csums_.block);
}

void FileStore::stage_release_unused() { stage_.release_unused(); }

void FileStore::stage_release(uint64_t id) { stage_.release(id); }

strata_store_usage FileStore::usage() {
  struct statvfs vfs;
  if (::statvfs(root_.c_str(), &vfs) != 0) throw_errno(errno, "statvfs " + root_);
  strata_store_usage u{};
  u.struct_size = sizeof u;
  u.total_bytes = uint64_t{vfs.f_blocks} * vfs.f_frsize;
  u.used_bytes = uint64_t{vfs.f_blocks - vfs.f_bfree} * vfs.f_frsize;
  u.n_objects = n_objects_.load();
  return u;
}

}  // namespace strata::filestore
