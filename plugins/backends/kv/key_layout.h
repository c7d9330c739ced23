// Where the kv backend keeps what, in one ordered key space.
//
//   M<name>                                  store metadata (format, chunk size, seq, ...)
//   C<coll>                                  a collection exists (empty value)
//   O<coll><oid>                             an object's onode (its size)
//   P<coll><oid>D<u64 chunk index>           data chunk + its block checksums (chunk_image.h;
//                                            may be short or absent: zeros)
//   P<coll><oid>H                            omap header
//   P<coll><oid>K<omap key>                  omap entry
//   P<coll><oid>X<xattr name>                xattr
//
// <coll> and <oid> are escaped components (kvdb/key_encoding.h), so keys sort
// by (collection, object) bytewise and every prefix is a scan range. Onodes
// live apart from the payload so that listing a collection reads onodes
// only, never chunks or omap entries; all of one object's payload is one
// contiguous range, so removing or cloning it is a single scan.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::kv {

namespace ns {
constexpr char kCollection = 'C';
constexpr char kMeta = 'M';
constexpr char kOnode = 'O';
constexpr char kPayload = 'P';
}  // namespace ns

namespace part {
constexpr char kData = 'D';
constexpr char kHeader = 'H';
constexpr char kOmap = 'K';
constexpr char kXattr = 'X';
}  // namespace part

namespace meta {
constexpr std::string_view kFormat = "Mformat";
constexpr std::string_view kChunkSize = "Mchunk_size";
// Checksum block size fixed at mkfs (chunk_image.h); absent in stores made
// before checksums, whose chunks carry none.
constexpr std::string_view kCsumBlock = "Mcsum_block_size";
constexpr std::string_view kSeq = "Mseq";
constexpr std::string_view kObjects = "Mobjects";
}  // namespace meta

std::string collection_key(std::string_view coll);
// Every collection key starts with this.
std::string collections_prefix();
// Every onode of the collection starts with this.
std::string onodes_prefix(std::string_view coll);
// Every payload key of the collection starts with this.
std::string payload_prefix(std::string_view coll);

// The keys of one object, built once per op.
class ObjectKeys {
 public:
  ObjectKeys(std::string_view coll, std::string_view oid);

  const std::string &onode() const { return onode_; }
  // Prefix of every payload key of this object.
  const std::string &payload() const { return payload_; }
  std::string payload_end() const;

  std::string chunk(uint64_t index) const;
  std::string chunks_end() const;  // exclusive bound of all chunk keys
  std::string header() const;
  std::string omap(std::string_view key) const;
  std::string omap_prefix() const;
  std::string xattr(std::string_view name) const;
  std::string xattr_prefix() const;

 private:
  std::string onode_;
  std::string payload_;
};

// "coll/oid" made printable for messages.
std::string describe(std::string_view coll, std::string_view oid);
std::string describe(std::string_view coll);

}  // namespace strata::kv
