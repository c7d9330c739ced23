// Clones (docs/BLOCK.md): a child image whose missing objects read through
// to its parent's snapshot, within the overlap, and on through the
// parent's own parents when that snapshot is a clone's. The first change
// of such an object copies the data up into the child, in the same write.
// Synchronous calls: never from a completion callback.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image_header.h"
#include "object_ops.h"

namespace strata::rbd {

// Another pool's ioctx, for a clone whose parents are there: 0 and *out
// (owned by whoever made the resolver, valid while it lives) or -errno. An
// empty resolver: parents in other pools are not reachable (-EOPNOTSUPP).
using PoolResolver = std::function<int(const std::string &pool, strata_ioctx_t *out)>;

// The ioctx of `pool`: ref's own, or the resolver's. Throws Error.
strata_ioctx_t pool_io(const ImageRef &ref, const std::string &pool, const PoolResolver &pools);

// One image snapshot a clone reads through, nearest first.
struct ParentLevel {
  strata_ioctx_t io = nullptr;
  std::string image_id;
  uint64_t snap_id = 0;
  // Bytes of this snapshot that read on through to the next level (its
  // parent_overlap; 0 for the last level).
  uint64_t overlap = 0;
};
using ParentChain = std::vector<ParentLevel>;

// The chain from a clone's parent spec: each level's snapshot record gives
// the overlap down to the next. Levels in other pools than ref's through
// `pools`; -ENOENT when a parent snapshot is gone.
std::shared_ptr<const ParentChain> load_parent_chain(const ImageRef &ref, const ParentSpec &p,
                                                     const PoolResolver &pools);

// Where a clone's object reads through to: object objno of the chain, its
// first `bytes` bytes (the part inside the clone's overlap).
struct ParentObject {
  const strata_client_api *api = nullptr;
  std::shared_ptr<const ParentChain> chain;
  uint32_t object_size = 0;  // the same at every level (a clone takes its parent's)
  uint64_t objno = 0;
  uint64_t bytes = 0;
};

// Reads [off, off+len) of a parent object: from the nearest level where it
// existed at that level's snapshot, zeros past the overlaps.
int read_parent_object(const ParentObject &parent, uint64_t off, uint64_t len, char *out);

// Applies m to the child object (led by snap_context(snap_seq) when
// snap_seq > 0), copying the parent's data up first when the child object
// does not exist yet (all of it unless m replaces the whole object). 0 or
// -errno (-ENOENT as mutate_object's); *copied tells whether it copied up.
int copy_up_and_mutate(const ObjectRef &child, uint64_t snap_seq, const ParentObject &parent,
                       const ObjectMutation &m, bool *copied);

// Adds delta to the children count of snapshot snap_id of image parent_id
// (a version-guarded read-modify-write of its record).
void adjust_snap_children(const ImageRef &parent, const std::string &parent_id, uint64_t snap_id,
                          int delta);

// Removes the `parent` key of image `id` (guarded by lock_value when it is
// not empty), then gives the parent snapshot its clone back (children - 1;
// a parent gone already is fine).
void drop_parent_link(const ImageRef &ref, const std::string &id, const ParentSpec &parent,
                      const std::string &lock_value, const PoolResolver &pools);

// Gives the parent snapshot its clone back (children - 1; a parent gone
// already is fine).
void release_parent_snap(const ImageRef &ref, const ParentSpec &parent, const PoolResolver &pools);

}  // namespace strata::rbd
