// Object names of a filesystem's metadata and data pools
// (docs/FILESYSTEM.md, "Objects of a filesystem"), and the hash that
// places a name in a directory fragment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mds/meta_types.h"

namespace strata::mds {

inline constexpr const char *kFsMetaOid = "mds.fsmeta";
inline constexpr const char *kJournalOid = "mds.journal";
// The fencing xattr on mds.journal and the journal segments; its value is
// the incarnation as 16 hex digits, so string order is number order.
inline constexpr const char *kIncarnationXattr = "strata.mds.incarnation";

std::string hex16(uint64_t v);
std::string segment_oid(uint64_t seg);        // j.<seg 16 hex>
std::string dir_oid(Ino dir, uint32_t frag);  // d.<ino>[.<frag 8 hex>]
std::string inode_oid(Ino ino);               // i.<ino>
std::string data_oid(Ino ino, uint64_t n);    // <ino 16 hex>.<n 8 hex>
std::string session_key(uint64_t id);         // session.<id 16 hex> in mds.fsmeta
std::string purge_key(Ino ino);               // purge.<ino> in mds.fsmeta
std::string backptr_oid(Ino ino);             // b.<ino % 64, 2 hex>: back-pointers, key hex16(ino)

// Parses names made by the functions above (fs check walks the pools).
std::optional<uint64_t> parse_hex(std::string_view s);
struct DirOid {
  Ino ino;
  uint32_t frag;
};
std::optional<DirOid> parse_dir_oid(std::string_view oid);
std::optional<Ino> parse_inode_oid(std::string_view oid);
std::optional<Ino> parse_data_oid(std::string_view oid);  // the ino of a data object

// The fragment of `name` in a directory of 2^bits fragments: a stable hash
// (xxh64, seed 0) of the name's bytes, low bits.
uint32_t frag_of(std::string_view name, uint8_t bits);

}  // namespace strata::mds
