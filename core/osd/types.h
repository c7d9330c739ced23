// The OSD's vocabulary: versions in a PG, log entries, PG info, missing
// objects, per-object info, and the names the OSD gives collections and
// internal objects in its Store.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "placement/placement_map.h"

namespace strata::osd {

using placement::PgId;

// A version in a PG: the map epoch the primary wrote it under, then a
// counter that grows by one per write in the PG. Two OSDs that logged the
// same EVersion logged the same write; the same counter under different
// epochs means one of them diverged (written by a primary whose interval
// ended before the write could complete).
struct EVersion {
  uint64_t epoch = 0;
  uint64_t version = 0;
  auto operator<=>(const EVersion &) const = default;
  bool operator==(const EVersion &) const = default;
  std::string str() const { return std::to_string(epoch) + "'" + std::to_string(version); }
};

// Who asked for a write: the client instance and its tid. Exactly-once
// delivery rests on it: a write whose reqid is in the PG log is answered
// from the log instead of being applied again.
struct ReqId {
  std::string client;
  uint64_t tid = 0;
  bool empty() const { return client.empty(); }
  bool operator==(const ReqId &) const = default;
};

struct ReqIdHash {
  size_t operator()(const ReqId &r) const noexcept {
    return std::hash<std::string_view>()(r.client) ^ (r.tid * 0x9e3779b97f4a7c15ull);
  }
};

enum class LogOp : uint8_t { kModify = 1, kDelete = 2 };

struct LogEntry {
  EVersion version;
  std::string oid;
  LogOp op = LogOp::kModify;
  ReqId reqid;
  int32_t rc = 0;
  uint64_t mtime_ns = 0;
  bool operator==(const LogEntry &) const = default;
};

// A stretch of map epochs during which a PG kept the same acting set and
// primary. Peering must hear from at least one member of every interval that
// may have accepted writes since the PG last went active.
struct PastInterval {
  uint64_t first = 0, last = 0;
  std::vector<int32_t> acting;
  int32_t primary = -1;
  bool maybe_went_rw = false;
  bool operator==(const PastInterval &) const = default;
};

struct PgInfo {
  PgId pgid;
  EVersion last_update;  // newest write in the log
  EVersion log_tail;     // the log holds every entry after this version
  uint64_t les = 0;      // last epoch started: the PG went active then
  // False while the OSD is a backfill target: its objects are not all
  // there, so it can be neither the authoritative log nor a source.
  bool backfill_complete = true;
  std::vector<PastInterval> past_intervals;  // since `les`
  // The interval the OSD last saw the PG in (last = 0): closed into
  // past_intervals when the OSD sees the next map after a restart. Local
  // only (not sent to peers).
  PastInterval current;
  bool operator==(const PgInfo &) const = default;
};

// An object an OSD must get from a peer: the version it needs (or that it
// must be deleted).
struct MissingItem {
  EVersion need;
  bool is_delete = false;
  bool operator==(const MissingItem &) const = default;
};
using MissingSet = std::map<std::string, MissingItem>;

// Kept in each object's xattr kObjectInfoAttr: its version and mtime.
struct ObjectInfo {
  EVersion version;
  uint64_t mtime_ns = 0;
  // CRC-32C of the whole object's data, when the op lists since the last
  // full-object write kept it known (see op_exec.cpp); reads of the whole
  // object on a backend that cannot checksum are verified against it.
  bool has_data_digest = false;
  uint32_t data_digest = 0;
  bool operator==(const ObjectInfo &) const = default;
};

// Store names. One collection per PG; inside it the client objects, plus
// one internal object whose omap holds the PG log, info and missing set.
std::string coll_name(PgId pg);                         // "pg.<pool>.<seed hex>"
std::optional<PgId> parse_coll_name(std::string_view name);
std::string pg_str(PgId pg);                            // "1.1f"

inline constexpr std::string_view kPgMetaObject = "_strata_pgmeta";
// The OSD's own collection: superblock (identity, last map).
inline constexpr std::string_view kOsdMetaColl = "osd_meta";
inline constexpr std::string_view kSuperblockObject = "superblock";
// Object xattrs: user names get a prefix so they can never collide with the
// OSD's own.
inline constexpr std::string_view kObjectInfoAttr = "s.oi";
inline constexpr std::string_view kUserXattrPrefix = "u.";

// Whether a client may name an object `oid`.
bool valid_object_name(std::string_view oid);

}  // namespace strata::osd
