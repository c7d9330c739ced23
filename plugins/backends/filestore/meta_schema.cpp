#include "filestore/meta_schema.h"

#include <cstring>

#include "kvdb/key_encoding.h"

namespace strata::filestore::schema {
namespace {

constexpr char kCollection = 'C';
constexpr char kObject = 'O';
constexpr char kXattr = 'X';
constexpr char kOmap = 'M';
constexpr char kHeader = 'H';
constexpr char kCsum = 'K';
constexpr char kSingleton = 'S';
constexpr uint8_t kRecordVersion = 1;

std::string table_prefix(char table, std::string_view coll) {
  std::string k(1, table);
  kvdb::keys::append_component(k, coll);
  return k;
}

std::string table_prefix(char table, std::string_view coll, std::string_view oid) {
  std::string k = table_prefix(table, coll);
  kvdb::keys::append_component(k, oid);
  return k;
}

KeyRange range_of(std::string prefix) {
  std::string end = kvdb::keys::prefix_end(prefix);
  return {std::move(prefix), std::move(end)};
}

void put_le(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t{static_cast<unsigned char>(in[pos + static_cast<size_t>(i)])} << (8 * i);
  return v;
}

}  // namespace

std::string ObjectRecord::encode() const {
  std::string out;
  out.reserve(21);
  out.push_back(static_cast<char>(kRecordVersion));
  put_le(out, file.seq, 8);
  put_le(out, file.op, 4);
  put_le(out, size, 8);
  return out;
}

std::optional<ObjectRecord> ObjectRecord::decode(std::string_view bytes) {
  if (bytes.size() != 21 || static_cast<uint8_t>(bytes[0]) != kRecordVersion) return std::nullopt;
  ObjectRecord r;
  r.file.seq = get_le(bytes, 1, 8);
  r.file.op = static_cast<uint32_t>(get_le(bytes, 9, 4));
  r.size = get_le(bytes, 13, 8);
  return r;
}

std::string collection_key(std::string_view coll) { return table_prefix(kCollection, coll); }

KeyRange all_collections() { return range_of(std::string(1, kCollection)); }

CollectionRanges collection_ranges(std::string_view coll) {
  return {range_of(table_prefix(kObject, coll)), range_of(table_prefix(kXattr, coll)),
          range_of(table_prefix(kOmap, coll)), range_of(table_prefix(kHeader, coll)),
          range_of(table_prefix(kCsum, coll))};
}

std::string object_key(std::string_view coll, std::string_view oid) {
  return table_prefix(kObject, coll, oid);
}

KeyRange objects_of(std::string_view coll) { return range_of(table_prefix(kObject, coll)); }

KeyRange all_objects() { return range_of(std::string(1, kObject)); }

bool split_object_key(std::string_view key, std::string &coll, std::string &oid) {
  if (key.empty() || key[0] != kObject) return false;
  key.remove_prefix(1);
  return kvdb::keys::next_component(key, coll) && kvdb::keys::next_component(key, oid) &&
         key.empty();
}

bool object_name_from_key(std::string_view key, size_t prefix_len, std::string &oid) {
  if (key.size() < prefix_len) return false;
  key.remove_prefix(prefix_len);
  return kvdb::keys::next_component(key, oid) && key.empty();
}

std::string xattr_key(std::string_view coll, std::string_view oid, std::string_view name) {
  std::string k = table_prefix(kXattr, coll, oid);
  k.append(name);
  return k;
}

KeyRange xattrs_of(std::string_view coll, std::string_view oid) {
  return range_of(table_prefix(kXattr, coll, oid));
}

std::string omap_key(std::string_view coll, std::string_view oid, std::string_view key) {
  std::string k = table_prefix(kOmap, coll, oid);
  k.append(key);
  return k;
}

KeyRange omap_of(std::string_view coll, std::string_view oid) {
  return range_of(table_prefix(kOmap, coll, oid));
}

std::string omap_header_key(std::string_view coll, std::string_view oid) {
  return table_prefix(kHeader, coll, oid);
}

std::string csum_key(std::string_view coll, std::string_view oid, uint64_t group) {
  std::string k = table_prefix(kCsum, coll, oid);
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((group >> (8 * i)) & 0xff));
  return k;
}

KeyRange csums_of(std::string_view coll, std::string_view oid) {
  return range_of(table_prefix(kCsum, coll, oid));
}

std::string committed_seq_key() { return std::string(1, kSingleton) + "committed_seq"; }
std::string format_key() { return std::string(1, kSingleton) + "format"; }
std::string csum_block_size_key() { return std::string(1, kSingleton) + "csum_block_size"; }
std::string clean_close_key() { return std::string(1, kSingleton) + "clean_close"; }

std::string encode_u64(uint64_t v) {
  std::string out;
  put_le(out, v, 8);
  return out;
}

std::optional<uint64_t> decode_u64(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  return get_le(bytes, 0, 8);
}

}  // namespace strata::filestore::schema
