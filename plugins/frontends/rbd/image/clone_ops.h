// Clones (docs/BLOCK.md): a child image whose missing objects read through
// to its parent's snapshot, within the overlap. The first change of such
// an object copies the parent's data up into the child, in the same write.
// Synchronous calls: never from a completion callback.
#pragma once

#include <cstdint>

#include "image_header.h"
#include "object_cow.h"

namespace strata::rbd {

// Where a clone's object reads through to: the parent's object of the
// same number, as of snapshot snap_id, its first `bytes` bytes (the part
// inside the overlap).
struct ParentObject {
  ObjectRef obj;
  uint64_t snap_id = 0;
  uint64_t bytes = 0;
};

// Applies m to the child object, copying the parent's data up first when
// the child object does not exist yet. 0 or -errno; *copied tells whether
// it copied up.
int copy_up_and_mutate(const ObjectRef &child, const ParentObject &parent,
                       const ObjectMutation &m, bool *copied);

// Reads [off, off+len) of a parent object (zeros past `bytes`).
int read_parent_object(const ParentObject &parent, uint64_t off, uint64_t len, char *out);

// Adds delta to the children count of snapshot snap_id of image parent_id
// (a version-guarded read-modify-write of its record).
void adjust_snap_children(const ImageRef &parent, const std::string &parent_id, uint64_t snap_id,
                          int delta);

}  // namespace strata::rbd
