// TxnBuilder: one transaction's strata_op array, built from readable calls.
//
// The one builder of raw ABI transactions for every test that drives a
// backend plugin directly: the conformance kit's suites, and the backend
// tests of the tree (tests/filestore, tests/kv), which link it through the
// strata_txn_builder library. It needs nothing but the SDK headers, so
// that the crash children of those tests can use it too (no test
// framework here).
//
// Copyable: the ops refer into storage the builder owns and are rebuilt by
// ops(), so a test may keep a history of builders and apply them again
// (replay tests). A builder may carry the seq it will be applied at
// (`TxnBuilder(7)`); the kit's FreshStore assigns seqs itself instead.
//
// Threading: a plain value; no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/objectstore.h"

namespace strata::conformance {

class TxnBuilder {
 public:
  TxnBuilder() = default;
  explicit TxnBuilder(uint64_t seq) : seq_(seq) {}

  TxnBuilder &mkcoll(std::string_view coll);
  TxnBuilder &rmcoll(std::string_view coll);
  TxnBuilder &touch(std::string_view coll, std::string_view oid);
  TxnBuilder &write(std::string_view coll, std::string_view oid, uint64_t offset,
                    std::string_view data);
  TxnBuilder &write_full(std::string_view coll, std::string_view oid, std::string_view data);
  TxnBuilder &truncate(std::string_view coll, std::string_view oid, uint64_t size);
  TxnBuilder &zero(std::string_view coll, std::string_view oid, uint64_t offset, uint64_t length);
  TxnBuilder &remove(std::string_view coll, std::string_view oid);
  TxnBuilder &setxattr(std::string_view coll, std::string_view oid, std::string_view name,
                       std::string_view value);
  TxnBuilder &rmxattr(std::string_view coll, std::string_view oid, std::string_view name);
  TxnBuilder &omap_set(std::string_view coll, std::string_view oid, std::string_view key,
                       std::string_view value);
  TxnBuilder &omap_rm(std::string_view coll, std::string_view oid, std::string_view key);
  TxnBuilder &omap_clear(std::string_view coll, std::string_view oid);
  TxnBuilder &omap_set_header(std::string_view coll, std::string_view oid, std::string_view header);
  // Removes keys in [first, end) bytewise.
  TxnBuilder &omap_rm_range(std::string_view coll, std::string_view oid, std::string_view first,
                            std::string_view end);
  TxnBuilder &clone(std::string_view coll, std::string_view src, std::string_view dst);
  // ABI 1.1: binds a stage (from the backend's stage_write) to the object.
  TxnBuilder &write_staged(std::string_view coll, std::string_view oid, uint64_t stage_id,
                           uint64_t length);
  // Any op, for cases the named helpers do not cover (unknown types, ops
  // read back from a file).
  TxnBuilder &raw(uint32_t type, std::string_view coll, std::string_view oid,
                  std::string_view key = {}, std::string_view value = {}, uint64_t offset = 0,
                  uint64_t length = 0);

  size_t size() const { return pending_.size(); }
  bool empty() const { return pending_.empty(); }
  bool has_clone() const;
  // The seq given at construction (0: none).
  uint64_t seq() const { return seq_; }
  // The first n ops only, same seq (a crash in the middle of apply).
  TxnBuilder prefix(size_t n) const;

  // The C ops; valid until the builder is changed or destroyed.
  const std::vector<strata_op> &ops() const;
  // A strata_txn over ops(); same validity.
  strata_txn txn(uint64_t seq, uint32_t flags = 0) const;
  // txn(seq()).
  strata_txn view() const { return txn(seq_); }

 private:
  struct Pending {
    uint32_t type;
    std::string coll, oid, key, value;
    uint64_t offset, length;
  };
  uint64_t seq_ = 0;
  std::vector<Pending> pending_;
  mutable std::vector<strata_op> ops_;
};

}  // namespace strata::conformance
