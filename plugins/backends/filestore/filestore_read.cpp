// FileStore read side: safe from any thread, concurrently with apply. Reads
// see committed metadata (the database, not a transaction's overlay) and the
// data files through the shared descriptor cache.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "checksum/block_checksums.h"

#include "filestore/filestore.h"
#include "filestore/large_read.h"
#include "filestore/names.h"
#include "kvdb/key_encoding.h"

namespace strata::filestore {
namespace {

// Visits [r.begin, r.end) starting after `start_after` (a full key; empty =
// from the beginning), at most `limit` entries (0 = no limit); `visit`
// returns false to stop.
template <class Visit>
void scan(const kvdb::Database &db, const schema::KeyRange &r, const std::string &start_after,
          uint64_t limit, Visit &&visit) {
  auto it = db.iterate({r.begin, r.end});
  if (start_after.empty()) {
    it->seek_to_first();
  } else {
    // The smallest key greater than start_after is start_after + NUL.
    std::string from = start_after;
    from.push_back('\0');
    it->seek(from);
  }
  for (uint64_t n = 0; it->valid() && (limit == 0 || n < limit); it->next(), ++n)
    if (!visit(it->key(), it->value())) return;
}

}  // namespace

schema::ObjectRecord FileStore::locate(std::string_view coll, std::string_view oid) const {
  std::string bytes;
  if (!db_->get(schema::object_key(coll, oid), &bytes))
    throw sdk::Error(ENOENT, describe_object(coll, oid) + " does not exist");
  auto rec = schema::ObjectRecord::decode(bytes);
  if (!rec)
    throw sdk::Error(EUCLEAN, "index record of " + describe_object(coll, oid) + " is damaged");
  return *rec;
}

void FileStore::data_damaged(const std::string &what) const {
  uint64_t n = csum_failures_.fetch_add(1) + 1;
  log_.log(STRATA_LOG_ERROR, "store %s: %s (%llu checksum failure%s since open)", root_.c_str(),
           what.c_str(), static_cast<unsigned long long>(n), n == 1 ? "" : "s");
  throw sdk::Error(EIO, what);
}

void FileStore::verify_blocks(std::string_view coll, std::string_view oid,
                              const std::string &path, uint64_t size, uint64_t a, uint64_t e,
                              const char *bytes) const {
  const uint64_t B = csums_.block;
  const uint64_t first = a / B, n = (e - a + B - 1) / B;
  std::vector<uint32_t> stored(n);
  load_csums(*db_, coll, oid, csums_, first, n, stored.data());
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t bs = (first + i) * B;
    const uint64_t valid = std::min(B, size - bs);
    uint32_t actual = checksum::padded_block_crc(bytes + (bs - a), valid, B);
    if (actual == stored[i]) continue;
    char what[160];
    std::snprintf(what, sizeof what, "block %llu (bytes %llu..%llu) fails its checksum (stored %08x, found %08x)",
                  static_cast<unsigned long long>(first + i), static_cast<unsigned long long>(bs),
                  static_cast<unsigned long long>(bs + valid), stored[i], actual);
    data_damaged(std::string(what) + " in data file " + path + " of " + describe_object(coll, oid));
  }
}

uint64_t FileStore::read(std::string_view coll, std::string_view oid, uint64_t off, uint64_t len,
                         void *buf) {
  schema::ObjectRecord rec = locate(coll, oid);
  if (off >= rec.size || len == 0) return 0;
  uint64_t n = len < rec.size - off ? len : rec.size - off;
  const std::string path = data_.path(rec.file);
  SharedFd fd = data_.open_for_read(rec.file);
  if (!fd) {
    if (csums_.enabled())
      data_damaged("data file " + path + " of " + describe_object(coll, oid) + " (" +
                   std::to_string(rec.size) + " bytes) is missing");
    throw sdk::Error(EIO, "data file " + path + " of " + describe_object(coll, oid) + " is missing");
  }
  if (!csums_.enabled()) {
    size_t got = n >= kDirectReadMin ? read_large(fd->get(), path, buf, n, off)
                                     : pread_full(fd->get(), buf, n, off, path);
    // A data file shorter than the index says (only after damage) reads as a hole.
    if (got < n) std::memset(static_cast<char *>(buf) + got, 0, n - got);
    return n;
  }

  // Whole checksum blocks [a, e) around the range, e clipped to the size.
  const uint64_t B = csums_.block;
  const uint64_t a = off / B * B;
  const uint64_t e = std::min(rec.size, (off + n + B - 1) / B * B);
  std::vector<char> whole;
  char *bytes = static_cast<char *>(buf);
  if (a != off || e != off + n) {
    whole.resize(e - a);
    bytes = whole.data();
  }
  size_t got = e - a >= kDirectReadMin ? read_large(fd->get(), path, bytes, e - a, a)
                                       : pread_full(fd->get(), bytes, e - a, a, path);
  try {
    if (stat_fd(fd->get(), path).links == 0)
      data_damaged("data file " + path + " of " + describe_object(coll, oid) +
                   " was deleted under the running store");
    if (got < e - a)
      data_damaged("data file " + path + " of " + describe_object(coll, oid) + " ends at byte " +
                   std::to_string(a + got) + ", the index says " + std::to_string(rec.size) +
                   " bytes");
    verify_blocks(coll, oid, path, rec.size, a, e, bytes);
  } catch (...) {
    std::memset(buf, 0, n);  // never hand out bytes that failed their check
    throw;
  }
  if (bytes != buf) std::memcpy(buf, bytes + (off - a), n);
  return n;
}

strata_object_stat FileStore::stat(std::string_view coll, std::string_view oid) {
  schema::ObjectRecord rec = locate(coll, oid);
  strata_object_stat st{};
  st.struct_size = sizeof st;
  st.size = rec.size;
  st.allocated_bytes = rec.size;
  // A data file missing or shorter than the index says was damaged behind
  // the store's back: an error, so that the OSD's light scrub and reads
  // (which start with a stat) see it instead of a size that looks right.
  SharedFd fd = data_.open_for_read(rec.file);
  if (!fd && rec.size > 0)
    throw sdk::Error(EIO, "data file " + data_.path(rec.file) + " of " + describe_object(coll, oid) +
                              " is missing");
  if (fd) {
    FileInfo fi = stat_fd(fd->get(), data_.path(rec.file));
    if (fi.size < rec.size)
      throw sdk::Error(EIO, "data file " + data_.path(rec.file) + " of " + describe_object(coll, oid) +
                                " holds " + std::to_string(fi.size) + " bytes, the index says " +
                                std::to_string(rec.size));
    st.allocated_bytes = fi.allocated_bytes;
  }
  scan(*db_, schema::xattrs_of(coll, oid), {}, 0, [&](std::string_view, std::string_view) {
    ++st.n_xattrs;
    return true;
  });
  return st;
}

bool FileStore::getxattr(std::string_view coll, std::string_view oid, std::string_view name,
                         std::string &value) {
  locate(coll, oid);
  return db_->get(schema::xattr_key(coll, oid, name), &value);
}

void FileStore::getxattrs(std::string_view coll, std::string_view oid, const sdk::KvVisitor &v) {
  locate(coll, oid);
  schema::KeyRange r = schema::xattrs_of(coll, oid);
  scan(*db_, r, {}, 0,
       [&](std::string_view k, std::string_view val) { return v(k.substr(r.begin.size()), val); });
}

std::string FileStore::omap_get_header(std::string_view coll, std::string_view oid) {
  locate(coll, oid);
  std::string header;
  db_->get(schema::omap_header_key(coll, oid), &header);
  return header;
}

bool FileStore::omap_get(std::string_view coll, std::string_view oid, std::string_view key,
                         std::string &value) {
  locate(coll, oid);
  return db_->get(schema::omap_key(coll, oid, key), &value);
}

void FileStore::omap_iterate(std::string_view coll, std::string_view oid,
                             std::string_view start_after, std::string_view end, uint64_t limit,
                             const sdk::KvVisitor &v) {
  locate(coll, oid);
  schema::KeyRange r = schema::omap_of(coll, oid);
  if (!end.empty()) r.end = schema::omap_key(coll, oid, end);
  std::string after =
      start_after.empty() ? std::string() : schema::omap_key(coll, oid, start_after);
  size_t prefix = r.begin.size();
  scan(*db_, r, after, limit,
       [&](std::string_view k, std::string_view val) { return v(k.substr(prefix), val); });
}

void FileStore::list_objects(std::string_view coll, std::string_view start_after, uint64_t limit,
                             const sdk::NameVisitor &v) {
  std::string ignored;
  if (!db_->get(schema::collection_key(coll), &ignored))
    throw sdk::Error(ENOENT, "collection '" + printable(coll) + "' does not exist");
  schema::KeyRange r = schema::objects_of(coll);
  // Encoded names are prefix-free and keep bytewise order, so "after the
  // key of start_after" is "after start_after".
  std::string after = start_after.empty() ? std::string() : schema::object_key(coll, start_after);
  std::string name;
  scan(*db_, r, after, limit, [&](std::string_view k, std::string_view) {
    if (!schema::object_name_from_key(k, r.begin.size(), name))
      throw sdk::Error(EUCLEAN, "damaged index key in collection '" + printable(coll) + "'");
    return v(name);
  });
}

void FileStore::list_collections(const sdk::NameVisitor &v) {
  schema::KeyRange r = schema::all_collections();
  std::string name;
  scan(*db_, r, {}, 0, [&](std::string_view k, std::string_view) {
    k.remove_prefix(1);
    if (!kvdb::keys::next_component(k, name) || !k.empty())
      throw sdk::Error(EUCLEAN, "damaged collection key in the metadata database");
    return v(name);
  });
}

}  // namespace strata::filestore
