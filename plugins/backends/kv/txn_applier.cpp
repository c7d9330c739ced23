#include "kv/txn_applier.h"

#include <vector>

#include "kv/key_erase.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::kv {

using sdk::view;

namespace {


[[noreturn]] void fail(int code, const strata_op &op, const std::string &why) {
  throw sdk::Error(code, std::string(strata_op_type_name(op.type)) + " " +
                             describe(view(op.collection), view(op.object)) + ": " + why);
}

}  // namespace

TxnApplier::TxnApplier(kvdb::Transaction &txn, uint64_t chunk_size, uint64_t csum_block)
    : txn_(txn), chunks_(txn, chunk_size, csum_block) {}

void TxnApplier::apply(const strata_op &op) {
  std::string_view coll = view(op.collection);
  switch (op.type) {
    case STRATA_OP_MKCOLL:
      make_collection(coll);
      return;
    case STRATA_OP_RMCOLL:
      remove_collection(coll);
      return;
    default:
      break;
  }
  if (op.object.len == 0) fail(EINVAL, op, "empty object name");
  require_collection(coll);
  Target t{coll, view(op.object), ObjectKeys(coll, view(op.object))};
  try {
    apply_object_op(op, t);
  } catch (const sdk::Error &e) {
    // A block that failed its checksum: name the object (other errors do).
    if (e.code() != -EIO) throw;
    fail(EIO, op, e.what());
  }
}

void TxnApplier::apply_object_op(const strata_op &op, const Target &t) {
  switch (op.type) {
    case STRATA_OP_TOUCH:
      existing_onode(t);
      return;
    case STRATA_OP_WRITE: {
      if (op.offset > UINT64_MAX - op.value.len) fail(EINVAL, op, "offset + length overflows");
      Onode o = existing_onode(t);
      chunks_.write(t.keys, o.size, op.offset, view(op.value));
      // objectstore.h: size = max(size, offset + len), also for len == 0.
      if (op.offset + op.value.len > o.size) {
        o.size = op.offset + op.value.len;
        store_onode(t, o);
      }
      return;
    }
    case STRATA_OP_WRITE_FULL: {
      Onode o = existing_onode(t);
      chunks_.erase_all(t.keys, o.size);
      chunks_.write(t.keys, 0, 0, view(op.value));
      if (o.size != op.value.len) {
        o.size = op.value.len;
        store_onode(t, o);
      }
      return;
    }
    case STRATA_OP_TRUNCATE: {
      Onode o = existing_onode(t);
      chunks_.truncate(t.keys, o.size, op.offset);
      if (o.size != op.offset) {
        o.size = op.offset;
        store_onode(t, o);
      }
      return;
    }
    case STRATA_OP_ZERO: {
      Onode o = existing_onode(t);
      chunks_.zero(t.keys, o.size, op.offset, op.length);
      return;
    }
    case STRATA_OP_REMOVE:
      remove_object(t);
      return;
    case STRATA_OP_SETXATTR:
      existing_onode(t);
      txn_.put(t.keys.xattr(view(op.key)), view(op.value));
      return;
    case STRATA_OP_RMXATTR:
      if (onode(t)) txn_.del(t.keys.xattr(view(op.key)));
      return;
    case STRATA_OP_OMAP_SET:
      existing_onode(t);
      txn_.put(t.keys.omap(view(op.key)), view(op.value));
      return;
    case STRATA_OP_OMAP_RM:
      if (onode(t)) txn_.del(t.keys.omap(view(op.key)));
      return;
    case STRATA_OP_OMAP_CLEAR:
      if (onode(t)) {
        std::string prefix = t.keys.omap_prefix();
        erase_keys(txn_, prefix, kvdb::keys::prefix_end(prefix));
      }
      return;
    case STRATA_OP_OMAP_SET_HEADER:
      existing_onode(t);
      txn_.put(t.keys.header(), view(op.value));
      return;
    case STRATA_OP_OMAP_RM_RANGE: {
      if (!onode(t)) return;
      // An empty end means "to the last key", as for omap_iterate.
      std::string begin = t.keys.omap(view(op.key));
      std::string end =
          op.value.len ? t.keys.omap(view(op.value)) : kvdb::keys::prefix_end(t.keys.omap_prefix());
      if (begin < end) erase_keys(txn_, begin, end);
      return;
    }
    case STRATA_OP_CLONE:
      if (op.value.len == 0) fail(EINVAL, op, "clone destination name is empty");
      clone_object(t, view(op.value));
      return;
    case STRATA_OP_WRITE_STAGED:
      fail(EOPNOTSUPP, op, "staged writes are not supported by the kv backend");
    default:
      fail(EOPNOTSUPP, op, "unknown op type " + std::to_string(op.type));
  }
}

void TxnApplier::make_collection(std::string_view coll) {
  std::string key = collection_key(coll);
  if (!txn_.contains(key)) txn_.put(key, std::string_view());
  known_collections_.insert(std::string(coll));
}

void TxnApplier::remove_collection(std::string_view coll) {
  std::string key = collection_key(coll);
  if (!txn_.contains(key)) return;
  std::string onodes = onodes_prefix(coll), onodes_end = kvdb::keys::prefix_end(onodes);
  std::string payload = payload_prefix(coll);

  // Counted for usage(); the onodes are the only per-object keys read.
  int64_t removed = 0;
  {
    auto it = txn_.iterate({onodes, onodes_end});
    for (it->seek_to_first(); it->valid(); it->next()) ++removed;
  }
  objects_delta_ -= removed;
  txn_.delete_range(onodes, onodes_end);
  txn_.delete_range(payload, kvdb::keys::prefix_end(payload));
  txn_.del(key);

  // Cached onodes of this collection are gone too.
  for (auto it = onodes_.lower_bound(onodes); it != onodes_.end() && it->first < onodes_end; ++it)
    it->second.reset();
  known_collections_.erase(std::string(coll));
}

void TxnApplier::require_collection(std::string_view coll) {
  if (known_collections_.count(coll)) return;
  if (!txn_.contains(collection_key(coll)))
    throw sdk::Error(ENOENT, "collection " + describe(coll) + " does not exist");
  known_collections_.insert(std::string(coll));
}

std::optional<Onode> &TxnApplier::onode(const Target &t) {
  auto it = onodes_.find(t.keys.onode());
  if (it != onodes_.end()) return it->second;
  std::optional<Onode> state;
  std::string bytes;
  if (txn_.get(t.keys.onode(), &bytes)) state = decode_onode(bytes, describe(t.coll, t.oid));
  return onodes_.emplace(t.keys.onode(), state).first->second;
}

Onode &TxnApplier::existing_onode(const Target &t) {
  std::optional<Onode> &o = onode(t);
  if (!o) {
    o = Onode{};
    txn_.put(t.keys.onode(), encode_onode(*o));
    ++objects_delta_;
  }
  return *o;
}

void TxnApplier::store_onode(const Target &t, const Onode &o) {
  std::optional<Onode> &cached = onode(t);
  if (!cached) ++objects_delta_;
  cached = o;
  txn_.put(t.keys.onode(), encode_onode(o));
}

void TxnApplier::remove_object(const Target &t) {
  std::optional<Onode> &o = onode(t);
  if (!o) return;
  // Payload keys sort data, header, omap, xattrs: one scan finds them all.
  erase_keys(txn_, t.keys.payload(), t.keys.payload_end());
  txn_.del(t.keys.onode());
  o.reset();
  --objects_delta_;
}

void TxnApplier::clone_object(const Target &src, std::string_view dest_oid) {
  if (dest_oid == src.oid) {
    existing_onode(src);
    return;
  }
  Onode copy = existing_onode(src);
  Target dest{src.coll, dest_oid, ObjectKeys(src.coll, dest_oid)};
  remove_object(dest);

  // Read fully before writing: the overlay's iterators must not see changes.
  std::vector<std::pair<std::string, std::string>> payload;
  {
    auto it = txn_.iterate({src.keys.payload(), src.keys.payload_end()});
    for (it->seek_to_first(); it->valid(); it->next()) {
      std::string key = dest.keys.payload();
      key.append(it->key().substr(src.keys.payload().size()));
      payload.emplace_back(std::move(key), std::string(it->value()));
    }
  }
  for (auto &[key, value] : payload) txn_.put(std::move(key), std::move(value));
  store_onode(dest, copy);
}

}  // namespace strata::kv
