// KvStore: the read side. Reads go straight to the database (no snapshot):
// the host never reads an object while a transaction on it is in flight.
#include <sys/statvfs.h>

#include <cstring>

#include "kv/chunk_reader.h"
#include "kv/key_layout.h"
#include "kv/kv_store.h"
#include "kv/onode.h"

namespace strata::kv {

uint64_t KvStore::object_size(std::string_view coll, std::string_view oid) const {
  ObjectKeys keys(coll, oid);
  std::string bytes;
  if (!db_->get(keys.onode(), &bytes))
    throw sdk::Error(ENOENT, "kv " + path_ + ": object " + describe(coll, oid) + " not found");
  return decode_onode(bytes, describe(coll, oid)).size;
}

bool KvStore::object_exists(std::string_view coll, std::string_view oid) const {
  std::string ignored;
  return db_->get(ObjectKeys(coll, oid).onode(), &ignored);
}

uint64_t KvStore::read(std::string_view coll, std::string_view oid, uint64_t off, uint64_t len,
                       void *buf) {
  const uint64_t size = object_size(coll, oid);
  if (off >= size) return 0;
  const uint64_t n = std::min(len, size - off);
  try {
    read_chunks(*db_, ObjectKeys(coll, oid), chunk_size_, csum_block_, off, n,
                static_cast<char *>(buf));
  } catch (const sdk::Error &e) {
    if (e.code() != -EIO) throw;
    std::memset(buf, 0, n);  // never hand out bytes that failed their check
    checksum_failed(sdk::Error(EIO, "kv " + path_ + ": object " + describe(coll, oid) + ": " +
                                        e.what()));
  }
  return n;
}

strata_object_stat KvStore::stat(std::string_view coll, std::string_view oid) {
  strata_object_stat st{};
  st.struct_size = sizeof st;
  st.size = object_size(coll, oid);
  // Chunks are not summed: that would read the whole object's key range.
  st.allocated_bytes = st.size;
  ObjectKeys keys(coll, oid);
  std::string prefix = keys.xattr_prefix();
  auto it = db_->iterate({prefix, kvdb::keys::prefix_end(prefix)});
  for (it->seek_to_first(); it->valid(); it->next()) ++st.n_xattrs;
  return st;
}

bool KvStore::getxattr(std::string_view coll, std::string_view oid, std::string_view name,
                       std::string &value) {
  // The value first: when it exists, so does the object (one get, not two).
  if (db_->get(ObjectKeys(coll, oid).xattr(name), &value)) return true;
  object_size(coll, oid);  // ENOENT for a missing object
  return false;
}

void KvStore::getxattrs(std::string_view coll, std::string_view oid, const sdk::KvVisitor &v) {
  object_size(coll, oid);
  std::string prefix = ObjectKeys(coll, oid).xattr_prefix();
  scan_suffixes(prefix, {}, kvdb::keys::prefix_end(prefix), 0, v);
}

std::string KvStore::omap_get_header(std::string_view coll, std::string_view oid) {
  std::string value;
  if (db_->get(ObjectKeys(coll, oid).header(), &value)) return value;
  object_size(coll, oid);
  return {};
}

bool KvStore::omap_get(std::string_view coll, std::string_view oid, std::string_view key,
                       std::string &value) {
  if (db_->get(ObjectKeys(coll, oid).omap(key), &value)) return true;
  object_size(coll, oid);
  return false;
}

void KvStore::omap_iterate(std::string_view coll, std::string_view oid,
                           std::string_view start_after, std::string_view end, uint64_t limit,
                           const sdk::KvVisitor &v) {
  object_size(coll, oid);
  ObjectKeys keys(coll, oid);
  std::string prefix = keys.omap_prefix();
  std::string upper = end.empty() ? kvdb::keys::prefix_end(prefix) : keys.omap(end);
  scan_suffixes(prefix, start_after, upper, limit, v);
}

void KvStore::scan_suffixes(const std::string &prefix, std::string_view start_after,
                            const std::string &upper, uint64_t limit,
                            const sdk::KvVisitor &v) const {
  std::string lower = prefix;
  lower.append(start_after);
  if (!upper.empty() && lower >= upper) return;
  auto it = db_->iterate({lower, upper});
  it->seek_to_first();
  if (!start_after.empty() && it->valid() && it->key() == std::string_view(lower)) it->next();
  for (uint64_t n = 0; it->valid() && (limit == 0 || n < limit); it->next(), ++n)
    if (!v(it->key().substr(prefix.size()), it->value())) return;
}

void KvStore::list_objects(std::string_view coll, std::string_view start_after, uint64_t limit,
                           const sdk::NameVisitor &v) {
  std::string ignored;
  if (!db_->get(collection_key(coll), &ignored))
    throw sdk::Error(ENOENT, "kv " + path_ + ": collection " + describe(coll) + " not found");
  std::string prefix = onodes_prefix(coll);
  std::string lower = prefix;
  if (!start_after.empty()) kvdb::keys::append_component(lower, start_after);
  auto it = db_->iterate({lower, kvdb::keys::prefix_end(prefix)});
  it->seek_to_first();
  if (!start_after.empty() && it->valid() && it->key() == std::string_view(lower)) it->next();
  std::string name;
  for (uint64_t n = 0; it->valid() && (limit == 0 || n < limit); it->next(), ++n) {
    std::string_view rest = it->key().substr(prefix.size());
    if (!kvdb::keys::next_component(rest, name) || !rest.empty())
      throw sdk::Error(EUCLEAN,
                       "kv " + path_ + ": malformed onode key in collection " + describe(coll));
    if (!v(name)) return;
  }
}

void KvStore::list_collections(const sdk::NameVisitor &v) {
  std::string prefix = collections_prefix();
  auto it = db_->iterate({prefix, kvdb::keys::prefix_end(prefix)});
  std::string name;
  for (it->seek_to_first(); it->valid(); it->next()) {
    std::string_view rest = it->key().substr(prefix.size());
    if (!kvdb::keys::next_component(rest, name) || !rest.empty())
      throw sdk::Error(EUCLEAN, "kv " + path_ + ": malformed collection key");
    if (!v(name)) return;
  }
}

strata_store_usage KvStore::usage() {
  strata_store_usage u{};
  u.struct_size = sizeof u;
  struct statvfs fs {};
  if (::statvfs(path_.c_str(), &fs) == 0)
    u.total_bytes = static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
  u.used_bytes = db_->disk_bytes();
  u.n_objects = objects_.load();
  return u;
}

}  // namespace strata::kv
