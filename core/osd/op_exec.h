// Executing a client's op list on one object: reads against the Store, and
// writes translated into ONE store Transaction (object ops plus the object
// info xattr) so that the whole list applies atomically or not at all.
//
// Guards (cmpXattr, assertVersion, assertExists) and reads inside a write
// see the object as it was before the list; the first failing op stops the
// list and nothing is applied. User xattrs are stored with the "u." prefix;
// the OSD's own object info lives in "s.oi".
//
// Threading: stateless; the caller serialises ops on one object.
#pragma once

#include <string>
#include <vector>

#include "osd/op_types.h"
#include "osd/types.h"
#include "store/store.h"

namespace strata::osd {

struct ObjectState {
  bool exists = false;
  uint64_t size = 0;
  ObjectInfo oi;  // zero when the object has none (or does not exist)
};

// Stat + object info. An absent object is not an error.
Result<ObjectState> load_object_state(store::Store &store, std::string_view coll,
                                      std::string_view oid);

struct ExecOutcome {
  int32_t rc = 0;                // first failing op's rc, or 0
  std::vector<OpResult> results;  // one per op executed (up to the failing one)
  bool mutated = false;          // t holds object ops to apply
  LogOp log_op = LogOp::kModify;  // kDelete when the object ends up removed with no snapshot companions
  uint64_t version = 0;          // object version: after the write, or as read
  ObjectState before;            // the object before the list (when the list loaded it)
};

// A list without mutations: results only. `t` may be null then.
// With mutations: appends the object ops to `t` and sets the object info
// xattr to `new_oi` (unless the list removes the object).
ExecOutcome execute_ops(store::Store &store, const std::string &coll, const std::string &oid,
                        const std::vector<OsdOp> &ops, const ObjectInfo &new_oi,
                        store::Transaction *t);

bool any_mutation(const std::vector<OsdOp> &ops);
// Whether any op depends on the object's current state (existence, size,
// version, attributes) rather than just overwriting part of it. Ops that
// do not read nothing of the object and may run while earlier writes to it
// are still on their way to the replicas (Pg::do_op pipelines them).
bool ops_need_object_state(const std::vector<OsdOp> &ops);
// Whether ops may take more space: anything but removes, truncates, zeroes
// and removals of xattrs and omap keys (what still runs on a full cluster,
// so that space can be freed).
bool may_use_space(const std::vector<OsdOp> &ops);

// "" when `data`, the whole data of an object with info `oi`, matches the
// info's data digest (or the info has none); else why it does not.
std::string data_digest_mismatch(const ObjectInfo &oi, std::string_view data);

// For a read-only list that ran (out.rc == 0): "" when every read that
// returned an object's whole data matches its data digest (reads of a part
// cannot be checked against a whole-object digest), else why not.
std::string check_data_digest(const std::vector<OsdOp> &ops, const ExecOutcome &out);

}  // namespace strata::osd
