// A reference model of the object store: what objectstore.h says a store
// holds after a sequence of transactions, kept in memory with no cleverness
// so that it is obviously right. Tests apply the same transactions to a real
// Store and to a Model, then compare the two (store_compare.h).
//
// Semantics modelled (sdk/include/strata/objectstore.h):
//   - data is a byte string of a logical size; holes read as zero;
//   - WRITE extends the size to offset+len; WRITE_FULL replaces the data and
//     keeps xattrs, omap and header; TRUNCATE sets the size (extending with
//     zeros); ZERO clears [offset, offset+length) clipped to the size and never
//     changes it;
//   - every object op creates a missing object, except REMOVE, RMXATTR,
//     OMAP_RM, OMAP_RM_RANGE and OMAP_CLEAR, which are no-ops on a missing one;
//   - OMAP_RM_RANGE removes keys in [key, value) bytewise;
//   - CLONE makes the destination (value) an independent copy of the source's
//     data, xattrs, omap and header;
//   - the store's host-side append (kOpAppend) writes at the current size;
//   - a transaction naming a collection that does not exist (as of the ops
//     before it in the same transaction) is rejected as a whole.
//
// Threading: none; a Model is a plain value.
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "store/transaction.h"

namespace strata::testing {

struct ObjectState {
  std::string data;
  std::map<std::string, std::string> xattrs;
  std::map<std::string, std::string> omap;
  std::string header;

  bool operator==(const ObjectState &) const = default;
};

using CollectionState = std::map<std::string, ObjectState>;

// The whole content of a store: collection name -> object name -> object.
struct StoreState {
  std::map<std::string, CollectionState> collections;

  bool operator==(const StoreState &) const = default;
  // Total bytes of object data, for reports.
  uint64_t data_bytes() const;
  uint64_t object_count() const;
};

class Model {
 public:
  // Applies t atomically. On a rejected transaction (an op into a missing
  // collection, an unknown op, a clone onto itself) returns the error and
  // leaves the model unchanged.
  Status apply(const store::Transaction &t);

  const StoreState &state() const { return state_; }
  StoreState &mutable_state() { return state_; }

 private:
  static Status validate(const StoreState &s, const store::Transaction &t);
  void apply_op(const strata_op &op);

  StoreState state_;
};

}  // namespace strata::testing
