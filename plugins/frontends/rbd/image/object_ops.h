// One data object's operations as the image library sends them
// (docs/BLOCK.md): a change carries the image's snapshot context until the
// object is known to be preserved for it, and a snapshot's data is read
// from the OSD's clone (client API 1.3, object snapshots).
// Synchronous calls: never from a completion callback.
#pragma once

#include <cstdint>
#include <string>

#include "strata/client_api.h"

namespace strata::rbd {

struct ObjectMutation {
  enum class Kind { kWrite, kWriteFull, kZero, kTruncate, kRemove };
  Kind kind = Kind::kWrite;
  const char *data = nullptr;  // kWrite, kWriteFull
  uint64_t off = 0;            // kWrite, kZero
  uint64_t len = 0;            // kWrite, kWriteFull, kZero; kTruncate: the new size
};

// Adds m's step to a write op (copy-up and plain changes both send one).
void add_object_mutation(const strata_client_api *strata_api, strata_write_op_t op,
                         const ObjectMutation &m);

struct ObjectRef {
  const strata_client_api *api = nullptr;
  strata_ioctx_t io = nullptr;
  std::string image_id;
  uint64_t objno = 0;
};

// Applies m to the object in one write op, led by snap_context(snap_seq)
// when snap_seq > 0 (the OSD keeps the object as it was for the snapshots
// up to snap_seq first, once). A zero or truncate never creates the object
// (assert_exists): -ENOENT for a missing one, as for a remove (nothing to
// do, but nothing was preserved either). Otherwise 0 or -errno.
int mutate_object(const ObjectRef &obj, uint64_t snap_seq, const ObjectMutation &m);

// Reads [off, off+len) of the object as of snapshot snap_id (0: as it is)
// into out, zeros past its end. -ENOENT when it did not exist then (the
// caller decides: zeros, or a clone's parent); otherwise 0 or -errno.
int read_object_at(const ObjectRef &obj, uint64_t snap_id, uint64_t off, uint64_t len,
                   char *out);

}  // namespace strata::rbd
