// The on-disk names and encodings of block images (docs/BLOCK.md, "Image
// format and snapshots"): which object holds what, omap keys, and how
// values are written (plain decimal text, so `strata omap get` shows them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "image.h"

namespace strata::rbd::format {

inline constexpr const char *kDirectory = "rbd_directory";
inline constexpr const char *kLockXattr = "lock";

std::string header_oid(const std::string &id);
// Snapshots of a data object are the OSD's (client API 1.3): clones that
// no listing shows, named by nothing of ours.
std::string data_oid(const std::string &id, uint64_t objno);

std::string dir_name_key(const std::string &name);  // "name_<NAME>" -> id
std::string dir_id_key(const std::string &id);      // "id_<ID>" -> name

// Header omap keys.
inline constexpr const char *kSize = "size";
inline constexpr const char *kObjectSize = "object_size";
inline constexpr const char *kCreated = "created";
inline constexpr const char *kSnapSeq = "snap_seq";
inline constexpr const char *kParent = "parent";
inline constexpr const char *kSnapPrefix = "snap_";        // + 16 hex id
inline constexpr const char *kSnapRequestPrefix = "snapreq_";  // + snapshot name
// A removal asked of the lock holder (+ snapshot name): it stops using the
// snapshot in its writes' context before the clones are trimmed.
inline constexpr const char *kSnapRemoveRequestPrefix = "snaprmreq_";

std::string hex16(uint64_t v);
std::optional<uint64_t> parse_hex16(std::string_view s);
std::string snap_key(uint64_t snap_id);

std::string encode_u64(uint64_t v);
// nullopt for anything but plain decimal digits.
std::optional<uint64_t> decode_u64(std::string_view s);

// "<size> <created_ns> <children> <parent_overlap> <name>" (the name last:
// it may hold spaces).
std::string encode_snap(const SnapInfo &s);
std::optional<SnapInfo> decode_snap(uint64_t id, std::string_view v);

// "<pool>\n<image id>\n<snap id>\n<overlap>\n<image name>\n<snap name>"
std::string encode_parent(const ParentSpec &p);
std::optional<ParentSpec> decode_parent(std::string_view v);

// 1..255 bytes, no '/', '@' or NUL. Empty string when valid, else why not.
std::string name_problem(const std::string &name);

// 16 random hex digits.
std::string random_id();

// The exclusive lock's xattr value: "<owner> <expires_ns> <description>".
struct LockValue {
  std::string owner;
  uint64_t expires_ns = 0;
  std::string description;
};
std::string encode_lock(const LockValue &l);
// nullopt for an empty (free) or unreadable value.
std::optional<LockValue> decode_lock(std::string_view v);

uint64_t now_realtime_ns();

}  // namespace strata::rbd::format
