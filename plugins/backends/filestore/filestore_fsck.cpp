// FileStore::fsck: the object index against the data files.
//
// Problems found (each reported through the host log):
//   - an index record that does not decode, or whose collection is missing;
//   - two objects sharing one data file;
//   - an indexed object whose data file is missing;
//   - a data file whose size differs from the size in the index;
//   - a block of an object's data that fails its checksum (each named with
//     its byte range);
//   - a data file no object references (orphan), or a stray name.
// Meant for a quiescent store (no apply running).
#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "checksum/block_checksums.h"

#include "filestore/filestore.h"
#include "filestore/names.h"

namespace strata::filestore {

std::vector<std::string> FileStore::bad_blocks(const std::string &coll, const std::string &oid,
                                               const schema::ObjectRecord &rec) const {
  std::vector<std::string> bad;
  const std::string path = data_.path(rec.file);
  UniqueFd fd = open_file_if_exists(path, O_RDONLY);
  if (!fd) return {"data file " + path + " is missing"};
  const uint64_t B = csums_.block;
  const uint64_t step = std::max<uint64_t>(B, 1 << 20);
  std::vector<char> buf(step);
  std::vector<uint32_t> stored(step / B);
  for (uint64_t a = 0; a < rec.size; a += step) {
    const uint64_t e = std::min(rec.size, a + step);
    size_t got = pread_full(fd.get(), buf.data(), e - a, a, path);
    std::memset(buf.data() + got, 0, e - a - got);
    const uint64_t n = (e - a + B - 1) / B;
    load_csums(*db_, coll, oid, csums_, a / B, n, stored.data());
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t bs = a + i * B, valid = std::min(B, rec.size - bs);
      if (checksum::padded_block_crc(buf.data() + i * B, valid, B) == stored[i]) continue;
      bad.push_back("block " + std::to_string(bs / B) + " (bytes " + std::to_string(bs) + ".." +
                    std::to_string(bs + valid) + ") of data file " + path +
                    " fails its checksum");
    }
  }
  return bad;
}

int64_t FileStore::fsck() {
  int64_t problems = 0;
  auto report = [&](const std::string &what) {
    ++problems;
    log_.log(STRATA_LOG_ERROR, "fsck %s: %s", root_.c_str(), what.c_str());
  };

  std::unordered_set<FileId, FileIdHash> referenced;
  std::unordered_set<std::string> collections;
  {
    schema::KeyRange r = schema::all_collections();
    auto it = db_->iterate({r.begin, r.end});
    for (it->seek_to_first(); it->valid(); it->next()) collections.emplace(it->key());
  }

  schema::KeyRange r = schema::all_objects();
  auto it = db_->iterate({r.begin, r.end});
  std::string coll, oid;
  uint64_t n_objects = 0;
  for (it->seek_to_first(); it->valid(); it->next()) {
    ++n_objects;
    if (!schema::split_object_key(it->key(), coll, oid)) {
      report("undecodable object key in the index");
      continue;
    }
    std::string obj = describe_object(coll, oid);
    auto rec = schema::ObjectRecord::decode(it->value());
    if (!rec) {
      report("damaged index record of " + obj);
      continue;
    }
    if (!collections.count(schema::collection_key(coll)))
      report(obj + " belongs to a collection that does not exist");
    if (!referenced.insert(rec->file).second)
      report(obj + " shares data file " + data_.path(rec->file) + " with another object");
    auto info = stat_path(data_.path(rec->file));
    if (!info) {
      report("data file " + data_.path(rec->file) + " of " + obj + " is missing");
    } else if (info->size != rec->size) {
      report("data file " + data_.path(rec->file) + " of " + obj + " has " +
             std::to_string(info->size) + " bytes, the index says " + std::to_string(rec->size));
    } else if (csums_.enabled()) {
      for (const std::string &bad : bad_blocks(coll, oid, *rec)) report(obj + ": " + bad);
    }
  }

  DataFiles::Listing files = data_.list();
  for (FileId id : files.files)
    if (!referenced.count(id))
      report("orphan data file " + data_.path(id) + " (no object uses it)");
  for (const std::string &stray : files.strays)
    report("unexpected entry " + data_.dir() + "/" + stray);

  log_.log(problems ? STRATA_LOG_WARN : STRATA_LOG_INFO,
           "fsck %s: %llu objects, %zu data files, %lld problems", root_.c_str(),
           static_cast<unsigned long long>(n_objects), files.files.size(),
           static_cast<long long>(problems));
  return problems;
}

}  // namespace strata::filestore
