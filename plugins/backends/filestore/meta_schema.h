// Layout of the filestore's metadata database (kvdb).
//
// Collection and object names are arbitrary bytes, so they are stored as
// escaped kvdb components (kvdb/key_encoding.h); the escaping keeps bytewise
// order, so listing objects is a prefix scan in name order. Every key starts
// with one byte naming its table:
//
//   'C' coll                  -> ""             a collection exists
//   'O' coll oid              -> ObjectRecord   an object's data file and size
//   'X' coll oid <raw name>   -> value          xattrs
//   'M' coll oid <raw key>    -> value          omap entries
//   'H' coll oid              -> value          omap header
//   'K' coll oid <u64 group>  -> crc32c words   data block checksums (data_csums.h)
//   'S' <raw name>            -> value          store singletons (committed seq)
//
// Putting the table first means one delete_range per table removes a whole
// collection or a whole object's xattrs/omap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "filestore/file_id.h"

namespace strata::filestore::schema {

// What the index knows about one object.
struct ObjectRecord {
  FileId file;        // its data file
  uint64_t size = 0;  // logical size; the data file's size matches it

  std::string encode() const;
  // nullopt if `bytes` is not a record this version wrote.
  static std::optional<ObjectRecord> decode(std::string_view bytes);
};

// A [begin, end) key range for a prefix scan or delete_range.
struct KeyRange {
  std::string begin;
  std::string end;
};

std::string collection_key(std::string_view coll);
KeyRange all_collections();
// Every key of every table that belongs to `coll` (its objects, xattrs, omap
// and headers), one range per table, plus the collection key itself.
struct CollectionRanges {
  KeyRange objects, xattrs, omap, headers, csums;
};
CollectionRanges collection_ranges(std::string_view coll);

std::string object_key(std::string_view coll, std::string_view oid);
KeyRange objects_of(std::string_view coll);
// Every object key of every collection.
KeyRange all_objects();
// Splits a key from all_objects() into collection and object name.
bool split_object_key(std::string_view key, std::string &coll, std::string &oid);
// The object name of an object key from objects_of(coll); false if malformed.
bool object_name_from_key(std::string_view key, size_t prefix_len, std::string &oid);

std::string xattr_key(std::string_view coll, std::string_view oid, std::string_view name);
KeyRange xattrs_of(std::string_view coll, std::string_view oid);

std::string omap_key(std::string_view coll, std::string_view oid, std::string_view key);
KeyRange omap_of(std::string_view coll, std::string_view oid);
std::string omap_header_key(std::string_view coll, std::string_view oid);

// Checksum group `group` of the object's data blocks (data_csums.h); the
// group index is big-endian so that groups sort in block order.
std::string csum_key(std::string_view coll, std::string_view oid, uint64_t group);
KeyRange csums_of(std::string_view coll, std::string_view oid);

std::string committed_seq_key();
// The checksum block size fixed at mkfs; a store made before checksums
// existed has none (its reads are not verified).
std::string csum_block_size_key();
// Present while the store is closed cleanly (written at close after a final
// checkpoint, removed at open): without it, open follows a crash.
std::string clean_close_key();
std::string format_key();
// Version of this layout, stored under format_key() at mkfs.
inline constexpr std::string_view kFormat = "strata-filestore-1";

std::string encode_u64(uint64_t v);
std::optional<uint64_t> decode_u64(std::string_view bytes);

}  // namespace strata::filestore::schema
