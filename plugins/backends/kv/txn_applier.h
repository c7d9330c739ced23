// Turns the ops of one host transaction into writes of one kvdb::Transaction
// (which the store then commits as one atomic batch). Ops read what earlier
// ops of the same transaction wrote through the Transaction's overlay.
//
// Semantics are those of strata/objectstore.h: REMOVE, RMXATTR, OMAP_RM,
// OMAP_RM_RANGE and OMAP_CLEAR are no-ops on a missing object, every other
// object op creates it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "kv/chunk_writer.h"
#include "kv/key_layout.h"
#include "kv/onode.h"
#include "kvdb/kvdb.h"
#include "strata/objectstore.h"

namespace strata::kv {

class TxnApplier {
 public:
  // csum_block: the store's checksum block size (chunk_image.h), 0 for none.
  TxnApplier(kvdb::Transaction &txn, uint64_t chunk_size, uint64_t csum_block = 0);

  // Throws Error naming the op and object on an invalid op.
  void apply(const strata_op &op);

  // Objects created minus objects removed so far.
  int64_t objects_delta() const { return objects_delta_; }
  // Corrupt blocks kept unreadable under partial changes (chunk_image.h).
  uint64_t poisoned_blocks() const { return chunks_.poisoned_blocks(); }

 private:
  // One object addressed by an op: its keys and (cached) onode.
  struct Target {
    std::string_view coll, oid;
    ObjectKeys keys;
  };

  void apply_object_op(const strata_op &op, const Target &t);
  void make_collection(std::string_view coll);
  void remove_collection(std::string_view coll);
  void require_collection(std::string_view coll);

  // The onode as this transaction sees it; nullopt if the object is missing.
  std::optional<Onode> &onode(const Target &t);
  // The onode, created empty if missing.
  Onode &existing_onode(const Target &t);
  void store_onode(const Target &t, const Onode &o);

  void remove_object(const Target &t);
  void clone_object(const Target &src, std::string_view dest_oid);

  kvdb::Transaction &txn_;
  ChunkWriter chunks_;
  // Onode key -> state (nullopt = missing), so that many ops on one object
  // read its onode once. Stays coherent because every onode change of this
  // transaction goes through store_onode/remove_object/remove_collection.
  std::map<std::string, std::optional<Onode>, std::less<>> onodes_;
  std::set<std::string, std::less<>> known_collections_;
  int64_t objects_delta_ = 0;
};

}  // namespace strata::kv
