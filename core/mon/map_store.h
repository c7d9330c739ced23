// Where the monitor keeps its state: the full map and the incremental of
// every epoch (the last `history` of them), the auth keys, and a few meta
// keys (e.g. which OSDs an operator marked out). The monitor is the only
// writer; one commit() per new epoch makes the map, its incremental and
// any meta/auth change durable together, or none of them.
//
// High availability: this interface is the seam for it. A replicated
// deployment would implement MapStore over an existing consensus store
// (etcd, or a Raft log such as the one in etcd's raft library) instead of
// RocksDB: commit() becomes one transaction that only succeeds on the
// leader when the proposed epoch is still last_epoch() + 1 (a
// compare-and-swap on the "last_epoch" key), reads come from the local
// replica, and the monitor that holds the lease is the only one that
// proposes. The monitor itself would not change: it already treats a
// failed commit() as "this epoch did not happen".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::mon {

// Everything one commit changes.
struct MapStoreUpdate {
  uint64_t epoch = 0;       // 0: no new epoch (auth or meta only)
  std::string full;         // cluster_map.h encode_map() of `epoch`
  std::string incremental;  // encode_incremental(epoch - 1, epoch); empty for epoch 1
  std::map<std::string, std::optional<std::string>> meta;  // nullopt erases
  std::map<std::string, std::optional<std::string>> auth;  // entity -> secret; nullopt erases
};

class MapStore {
 public:
  virtual ~MapStore() = default;

  // Makes the update durable (synced) atomically. REQUIRES: update.epoch is
  // 0 or last_epoch() + 1. Not thread-safe against other commits: the
  // monitor serialises them.
  virtual Status commit(const MapStoreUpdate &update) = 0;

  // 0 when the store holds no map yet (before mkfs).
  virtual uint64_t last_epoch() const = 0;
  // The oldest epoch whose full map and incremental are still kept.
  virtual uint64_t first_epoch() const = 0;
  virtual Result<std::string> full_map(uint64_t epoch) const = 0;     // ENOENT if trimmed
  virtual Result<std::string> incremental(uint64_t epoch) const = 0;  // ENOENT if trimmed
  virtual std::map<std::string, std::string> auth_keys() const = 0;
  virtual std::optional<std::string> meta(const std::string &key) const = 0;
};

struct RocksMapStoreOptions {
  bool create = false;     // mkfs: make the directory; fails if a store exists
  uint64_t history = 500;  // epochs kept; older fulls and incrementals are trimmed
};

// The embedded default: RocksDB in `dir`, synced writes, one WriteBatch
// per commit. Fails with a message naming `dir`.
Result<std::unique_ptr<MapStore>> open_rocks_map_store(const std::string &dir,
                                                       RocksMapStoreOptions opts = {});

}  // namespace strata::mon
