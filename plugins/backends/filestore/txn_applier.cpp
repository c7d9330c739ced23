#include "filestore/txn_applier.h"

#include <limits>
#include <utility>
#include <vector>

#include "filestore/file_data.h"
#include "filestore/names.h"
#include "filestore/posix_file.h"
#include "filestore/stage_binding.h"
#include "strata/cpp/objectstore.hpp"

namespace strata::filestore {
namespace {

// Objects with at most this many xattrs/omap keys have them removed with
// point deletes; bigger ones with one range delete. Range tombstones are
// cheap to write but every later read has to check them, so they are kept
// for the cases where they save real work.
constexpr size_t kPointDeleteLimit = 64;


uint64_t checked_end(uint64_t offset, uint64_t length) {
  if (offset > std::numeric_limits<int64_t>::max() - length)
    throw sdk::make_error(EFBIG, "range %llu+%llu is beyond the largest object size",
                          static_cast<unsigned long long>(offset),
                          static_cast<unsigned long long>(length));
  return offset + length;
}

}  // namespace

TxnApplier::TxnApplier(kvdb::Database &db, DataFiles &data, StageArea &stage,
                       const sdk::Logger &log, bool guard_clones, const CsumPolicy &csums,
                       RecordCache *cache)
    : db_(db),
      data_(data),
      stage_(stage),
      log_(log),
      guard_clones_(guard_clones),
      csums_(csums),
      meta_(db),
      cache_(cache) {}

TxnApplier::Outcome TxnApplier::apply_ops(const strata_txn &txn) {
  const sdk::TxnOps ops(txn);
  for (size_t i = 0; i < ops.size(); ++i) {
    const strata_op op = ops[i];
    try {
      apply_op(op, txn.seq, static_cast<uint32_t>(i));
    } catch (const sdk::Error &e) {
      std::string what = std::string("txn ") + std::to_string(txn.seq) + " op " +
                         std::to_string(i) + " (" + strata_op_type_name(op.type) + ") on " +
                         describe_object(sdk::view(op.collection), sdk::view(op.object)) + ": " +
                         e.what();
      throw sdk::Error(e.code(), what);
    }
  }
  return outcome_;
}

void TxnApplier::commit() {
  if (meta_.empty()) return;
  kvdb::WriteOptions wo;
  wo.sync = false;
  wo.disable_wal = true;
  meta_.commit(wo);
  publish();
}

void TxnApplier::publish() {
  if (!cache_) return;
  if (collection_removed_) cache_->clear();
  for (const auto &[key, rec] : touched_) {
    if (rec) cache_->put(key, *rec);
    else cache_->erase(key);
  }
  touched_.clear();
}

void TxnApplier::commit_durable_as(uint64_t seq) {
  meta_.put(schema::committed_seq_key(), schema::encode_u64(seq));
  kvdb::WriteOptions wo;
  wo.sync = true;
  meta_.commit(wo);
  publish();
}

void TxnApplier::apply_op(const strata_op &op, uint64_t seq, uint32_t index) {
  std::string_view coll = sdk::view(op.collection);
  std::string_view key = sdk::view(op.key);
  std::string_view value = sdk::view(op.value);
  FileId fresh = file_for_op(seq, index);

  switch (op.type) {
    case STRATA_OP_MKCOLL:
      return make_collection(coll);
    case STRATA_OP_RMCOLL:
      return remove_collection(coll);
    default:
      break;
  }

  Target t = target(coll, sdk::view(op.object));
  switch (op.type) {
    case STRATA_OP_TOUCH:
      ensure(t, fresh);
      return;
    case STRATA_OP_WRITE:
      return write(t, op.offset, value, fresh);
    case STRATA_OP_WRITE_FULL:
      return write_full(t, value, fresh);
    case STRATA_OP_TRUNCATE:
      return truncate(t, op.offset, fresh);
    case STRATA_OP_ZERO:
      return zero(t, op.offset, op.length, fresh);
    case STRATA_OP_REMOVE:
      return remove_object(t);
    case STRATA_OP_SETXATTR:
      ensure(t, fresh);
      meta_.put(schema::xattr_key(coll, t.oid, key), value);
      return;
    case STRATA_OP_RMXATTR:
      if (t.record) meta_.del(schema::xattr_key(coll, t.oid, key));
      return;
    case STRATA_OP_OMAP_SET:
      ensure(t, fresh);
      meta_.put(schema::omap_key(coll, t.oid, key), value);
      return;
    case STRATA_OP_OMAP_RM:
      if (t.record) meta_.del(schema::omap_key(coll, t.oid, key));
      return;
    case STRATA_OP_OMAP_CLEAR:
      if (t.record) omap_remove_range(t, {}, {});
      return;
    case STRATA_OP_OMAP_SET_HEADER:
      ensure(t, fresh);
      meta_.put(schema::omap_header_key(coll, t.oid), value);
      return;
    case STRATA_OP_OMAP_RM_RANGE:
      if (t.record) {
        // An empty end means "no upper bound", as for omap_iterate.
        if (value.empty())
          omap_remove_range(t, key, {});
        else if (key < value)
          omap_remove_range(t, key, value);
      }
      return;
    case STRATA_OP_CLONE:
      return clone(t, value, fresh, file_for_op(seq, index, 1));
    case STRATA_OP_WRITE_STAGED:
      return write_staged(t, op.offset, op.length, fresh);
    default:
      throw sdk::make_error(EOPNOTSUPP, "unknown op type %u", op.type);
  }
}

TxnApplier::Target TxnApplier::target(std::string_view coll, std::string_view oid) const {
  Target t{coll, oid, schema::object_key(coll, oid), std::nullopt};
  if (auto it = touched_.find(t.key); it != touched_.end()) {
    t.record = it->second;
    return t;
  }
  if (cache_ && !collection_removed_) {
    if (const schema::ObjectRecord *rec = cache_->find(t.key)) {
      t.record = *rec;
      return t;
    }
  }
  std::string bytes;
  if (meta_.get(t.key, &bytes)) {
    t.record = schema::ObjectRecord::decode(bytes);
    if (!t.record) throw sdk::Error(EUCLEAN, "index record is damaged");
  }
  return t;
}

schema::ObjectRecord &TxnApplier::ensure(Target &t, FileId file) {
  if (t.record) return *t.record;
  // No check that the collection exists: the host validated that before
  // journaling, and during replay a later RMCOLL that was already applied
  // may have removed it; that RMCOLL is replayed too and removes this object.
  data_.create(file);
  t.record = schema::ObjectRecord{file, 0};
  t.created = true;
  save(t);
  ++outcome_.object_delta;
  return *t.record;
}

void TxnApplier::save(const Target &t) {
  meta_.put(t.key, t.record->encode());
  touched_.insert_or_assign(t.key, t.record);
}

SharedFd TxnApplier::open_data(const Target &t) { return data_.open_for_write(t.record->file); }

template <class Fn>
void TxnApplier::update_csums(const Target &t, int fd, Fn &&fn) {
  if (!csums_.enabled()) return;
  CsumEditor editor(meta_, t.coll, t.oid, csums_);
  DataCsumUpdater updater(editor, csums_, fd, data_.path(t.record->file),
                          describe_object(t.coll, t.oid));
  fn(updater);
  editor.flush();
}

void TxnApplier::remove_object(Target &t) {
  if (!t.record) return;
  // Unlink first: if we crash before the batch commits, replay finds the
  // index entry and removes it again, whereas the opposite order would leave
  // an orphan file that nothing references.
  data_.remove(t.record->file);
  meta_.del(t.key);
  touched_.insert_or_assign(t.key, std::nullopt);
  erase_keys(schema::omap_of(t.coll, t.oid));
  erase_keys(schema::xattrs_of(t.coll, t.oid));
  erase_keys(schema::csums_of(t.coll, t.oid));
  meta_.del(schema::omap_header_key(t.coll, t.oid));
  t.record.reset();
  --outcome_.object_delta;
}

void TxnApplier::omap_remove_range(const Target &t, std::string_view begin, std::string_view end) {
  schema::KeyRange all = schema::omap_of(t.coll, t.oid);
  erase_keys({begin.empty() ? all.begin : schema::omap_key(t.coll, t.oid, begin),
              end.empty() ? all.end : schema::omap_key(t.coll, t.oid, end)});
}

void TxnApplier::erase_keys(const schema::KeyRange &r) {
  std::vector<std::string> keys;
  {
    auto it = meta_.iterate({r.begin, r.end});
    for (it->seek_to_first(); it->valid() && keys.size() <= kPointDeleteLimit; it->next())
      keys.emplace_back(it->key());
  }
  if (keys.size() > kPointDeleteLimit)
    meta_.delete_range(r.begin, r.end);
  else
    for (const std::string &k : keys) meta_.del(k);
}

void TxnApplier::make_collection(std::string_view coll) {
  std::string key = schema::collection_key(coll);
  if (!meta_.contains(key)) meta_.put(key, "");
}

void TxnApplier::remove_collection(std::string_view coll) {
  schema::KeyRange objects = schema::objects_of(coll);
  std::vector<FileId> files;
  {
    auto it = meta_.iterate({objects.begin, objects.end});
    for (it->seek_to_first(); it->valid(); it->next()) {
      auto rec = schema::ObjectRecord::decode(it->value());
      if (!rec)
        throw sdk::Error(EUCLEAN, "damaged index record in collection '" + printable(coll) + "'");
      files.push_back(rec->file);
    }
  }
  // Records of this collection, cached or touched, are all gone now; the
  // overlay's range delete answers for them from here on.
  touched_.clear();
  collection_removed_ = true;
  for (FileId f : files) data_.remove(f);  // before the index entries go
  outcome_.object_delta -= static_cast<int64_t>(files.size());
  schema::CollectionRanges r = schema::collection_ranges(coll);
  for (const schema::KeyRange *range : {&r.objects, &r.xattrs, &r.omap, &r.headers, &r.csums})
    meta_.delete_range(range->begin, range->end);
  meta_.del(schema::collection_key(coll));
}

void TxnApplier::write(Target &t, uint64_t offset, std::string_view data, FileId fresh) {
  uint64_t end = checked_end(offset, data.size());
  schema::ObjectRecord &rec = ensure(t, fresh);
  SharedFd fd = open_data(t);
  if (!data.empty()) {
    update_csums(t, fd->get(), [&](DataCsumUpdater &u) {
      u.write(offset, data.data(), data.size(), rec.size);
    });
    pwrite_all(fd->get(), data.data(), data.size(), offset, data_.path(rec.file));
  }
  if (end > rec.size) {
    if (data.empty()) truncate_fd(fd->get(), end, data_.path(rec.file));
    rec.size = end;
    save(t);
  }
}

void TxnApplier::write_full(Target &t, std::string_view data, FileId fresh) {
  schema::ObjectRecord &rec = ensure(t, fresh);
  SharedFd fd = open_data(t);
  std::string path = data_.path(rec.file);
  if (t.created) {
    // The usual case of a small file's object: a new, empty data file, so
    // no old checksums to clear and no old length to cut (a syscall and a
    // database seek per object saved).
    update_csums(t, fd->get(), [&](DataCsumUpdater &u) { u.fill_new(data.data(), data.size()); });
    if (!data.empty()) pwrite_all(fd->get(), data.data(), data.size(), 0, path);
  } else {
    update_csums(t, fd->get(), [&](DataCsumUpdater &u) { u.replace(data.data(), data.size()); });
    if (!data.empty()) pwrite_all(fd->get(), data.data(), data.size(), 0, path);
    // Overwrite, then cut: the blocks in [0, size) are reused instead of
    // being freed and allocated again.
    if (stat_fd(fd->get(), path).size != data.size()) truncate_fd(fd->get(), data.size(), path);
  }
  if (rec.size != data.size()) {
    rec.size = data.size();
    save(t);
  }
}

void TxnApplier::truncate(Target &t, uint64_t size, FileId fresh) {
  checked_end(size, 0);
  schema::ObjectRecord &rec = ensure(t, fresh);
  SharedFd fd = open_data(t);
  update_csums(t, fd->get(), [&](DataCsumUpdater &u) { u.truncate(rec.size, size); });
  truncate_fd(fd->get(), size, data_.path(rec.file));
  if (rec.size != size) {
    rec.size = size;
    save(t);
  }
}

void TxnApplier::zero(Target &t, uint64_t offset, uint64_t length, FileId fresh) {
  schema::ObjectRecord &rec = ensure(t, fresh);
  if (offset >= rec.size) return;
  uint64_t n = length < rec.size - offset ? length : rec.size - offset;
  if (n == 0) return;
  SharedFd fd = open_data(t);
  update_csums(t, fd->get(), [&](DataCsumUpdater &u) { u.write(offset, nullptr, n, rec.size); });
  zero_range(fd->get(), offset, n, data_.path(rec.file));
}

void TxnApplier::clone(Target &src, std::string_view dst_name, FileId src_fresh, FileId dst_fresh) {
  schema::ObjectRecord &rec = ensure(src, src_fresh);
  if (dst_name == src.oid) return;
  Target dst = target(src.coll, dst_name);
  remove_object(dst);

  outcome_.cloned = true;
  std::string dst_path = data_.path(dst_fresh);
  if (!guard_clones_) {
    SharedFd from = open_data(src);
    SharedFd to = data_.create(dst_fresh);
    clone_file_data(from->get(), to->get(), rec.size, dst_path);
  } else if (!data_.exists(dst_fresh)) {
    SharedFd from = open_data(src);
    data_.create_durably(dst_fresh,
                         [&](int to) { clone_file_data(from->get(), to, rec.size, dst_path); });
  }
  // else: a replay, and this clone's file is complete; keep it.
  dst.record = schema::ObjectRecord{dst_fresh, rec.size};
  save(dst);
  ++outcome_.object_delta;

  copy_keys(schema::xattrs_of(src.coll, src.oid), schema::xattrs_of(dst.coll, dst.oid).begin);
  copy_keys(schema::omap_of(src.coll, src.oid), schema::omap_of(dst.coll, dst.oid).begin);
  // The copy's blocks are the source's, so are their checksums (a corrupt
  // source block stays detectable in the copy).
  copy_keys(schema::csums_of(src.coll, src.oid), schema::csums_of(dst.coll, dst.oid).begin);
  std::string header;
  if (meta_.get(schema::omap_header_key(src.coll, src.oid), &header))
    meta_.put(schema::omap_header_key(dst.coll, dst.oid), header);
}

void TxnApplier::copy_keys(const schema::KeyRange &from, const std::string &to_prefix) {
  std::vector<std::pair<std::string, std::string>> entries;
  {
    auto it = meta_.iterate({from.begin, from.end});
    for (it->seek_to_first(); it->valid(); it->next()) {
      std::string_view k = it->key();
      k.remove_prefix(from.begin.size());
      entries.emplace_back(to_prefix + std::string(k), std::string(it->value()));
    }
  }
  for (auto &[k, v] : entries) meta_.put(std::move(k), std::move(v));
}

void TxnApplier::write_staged(Target &t, uint64_t stage_id, uint64_t length, FileId fresh) {
  checked_end(length, 0);

  std::string stage_path = stage_.path(stage_id);
  if (path_exists(stage_path)) {
    bind_stage_file(stage_path, data_, fresh);
  } else if (path_exists(data_.path(fresh))) {
    // Stages stay until a checkpoint covers their transaction, and replay
    // starts after the checkpoint, so this is damage (or a stage deleted by
    // hand). Keep the file bound at the first application: the best there is.
    log_.log(STRATA_LOG_WARN, "stage %llx of %s is gone; keeping its bound data file %s",
             static_cast<unsigned long long>(stage_id), describe_object(t.coll, t.oid).c_str(),
             data_.path(fresh).c_str());
  } else {
    // Stage and bound file both gone: only correct if a later op of this
    // replay supersedes the data (REMOVE, RMCOLL, WRITE_FULL, another
    // WRITE_STAGED, a CLONE onto it). Bind a hole of the right size.
    log_.log(STRATA_LOG_WARN,
             "stage %llx of %s is gone; binding zeros, a later replayed op must supersede it",
             static_cast<unsigned long long>(stage_id), describe_object(t.coll, t.oid).c_str());
    data_.create(fresh);
  }

  if (t.record && !(t.record->file == fresh)) data_.remove(t.record->file);
  if (!t.record) ++outcome_.object_delta;
  t.record = schema::ObjectRecord{fresh, length};
  SharedFd fd = data_.open_for_write(fresh);
  std::string path = data_.path(fresh);
  if (stat_fd(fd->get(), path).size != length) truncate_fd(fd->get(), length, path);
  update_csums(t, fd->get(), [&](DataCsumUpdater &u) {
    const uint64_t blocks = length / csums_.block + (length % csums_.block != 0);
    std::vector<uint32_t> crcs = stage_.csums(stage_id);
    if (crcs.size() != blocks) {
      // Staged before a restart (a replay): the stage file, pristine until
      // the next checkpoint, is now the data file; checksum its bytes.
      std::vector<char> bytes(length);
      size_t got = pread_full(fd->get(), bytes.data(), length, 0, path);
      crcs = compute_csums(bytes.data(), got, csums_.block);
      crcs.resize(blocks, csums_.zero_crc);
    }
    u.replace_with(crcs.data(), length);
  });
  save(t);
  stage_.mark_consumed(stage_id);
}

}  // namespace strata::filestore
