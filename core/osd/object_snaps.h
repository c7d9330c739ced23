// Object snapshots on the OSD (client API 1.3, docs/ARCHITECTURE.md "Object
// snapshots"): per object a snap set (the newest snapshot it was preserved
// for, and its clones), kept in a hidden companion object, and the clones
// themselves, hidden objects of the same placement group collection.
//
// Hidden names are the object's name, a NUL, then a tag: client names
// cannot hold a NUL (client.h), so they never collide with one, and they
// sort right after their object, so a backfill that has passed an object
// has passed its clones too. Everything that moves objects between OSDs
// (recovery, backfill, scrub) handles them as plain objects; a recovery
// push of an object carries its companions with it (Pg::build_push_txn).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace strata::osd {

struct SnapClone {
  uint64_t id = 0;    // the newest snapshot the clone serves
  uint64_t size = 0;  // the object's data size then
  bool exists = false;  // false: the object did not exist for those snapshots
};

struct SnapSet {
  uint64_t seq = 0;               // the newest snapshot preserved for
  std::vector<SnapClone> clones;  // ascending id; clone C serves (previous id, C]
};

// Where the snap set lives (as xattr kSnapSetAttr), and clone `id`'s object.
std::string snapset_object(std::string_view oid);
std::string clone_object(std::string_view oid, uint64_t id);
inline constexpr std::string_view kSnapSetAttr = "s.ss";
// A companion (snap set or clone) rather than an object clients see.
bool is_snap_companion(std::string_view name);

std::string encode_snapset(const SnapSet &ss);
Result<SnapSet> decode_snapset(std::string_view in);
// An object without a snap set gets an empty one (seq 0, no clones).
Result<SnapSet> load_snapset(store::Store &store, std::string_view coll, std::string_view oid);

// The clone serving snapshot `snapid`, or nullopt when the object as it is
// now serves it (snapid newer than every clone).
std::optional<SnapClone> clone_serving(const SnapSet &ss, uint64_t snapid);

// Clones that no snapshot in `keep` is served by.
std::vector<SnapClone> clones_unneeded(const SnapSet &ss, const std::vector<uint64_t> &keep);

// Every companion object of `oid` the snap set names: the snap set's
// object (when `ss` came from one) and each existing clone's.
std::vector<std::string> companion_objects(std::string_view oid, const SnapSet &ss);

}  // namespace strata::osd
