// Copy-on-write of data objects for snapshots (docs/BLOCK.md). There is no
// object clone in the OSDs, so the image's single writer preserves a head
// object before it first changes it after a snapshot: the head's own omap
// says up to which snapshot it was preserved ("snapseq") and where each
// preserved state is ("clone_<snap id>": "" = the copy object
// rbd_data.<ID>.<OBJNO>@<snap id>, "absent" = the object did not exist).
// Synchronous calls: never from a completion callback.
#pragma once

#include <cstdint>
#include <string>

#include "strata/client_api.h"

namespace strata::rbd {

struct ObjectMutation {
  enum class Kind { kWrite, kWriteFull, kZero, kTruncate };
  Kind kind = Kind::kWrite;
  const char *data = nullptr;  // kWrite, kWriteFull
  uint64_t off = 0;            // kWrite, kZero
  uint64_t len = 0;            // kWrite, kWriteFull, kZero; kTruncate: the new size
};

// Adds m's step to a write op (copy-up and copy-on-write both send one).
void add_object_mutation(const strata_client_api *strata_api, strata_write_op_t op,
                         const ObjectMutation &m);

struct ObjectRef {
  const strata_client_api *api = nullptr;
  strata_ioctx_t io = nullptr;
  std::string image_id;
  uint64_t objno = 0;
};

// Applies m to the head object after preserving it for snapshot snap_seq
// when it was not yet (snap_seq 0: no snapshots, just applies m). Zeroes
// and truncates of a missing object do nothing (it reads as zeros already).
// 0 or -errno; *copied tells whether a copy object was written, and
// *preserved whether the head now exists marked as preserved for snap_seq
// (so later changes need no check until the next snapshot).
int mutate_preserving(const ObjectRef &obj, uint64_t snap_seq, const ObjectMutation &m,
                      bool *copied, bool *preserved = nullptr);

// Reads [off, off+len) of object obj as of snapshot snap_id into out
// (zeros where nothing is). 0 or -errno.
int read_snapshot_object(const ObjectRef &obj, uint64_t snap_id, uint64_t off, uint64_t len,
                         char *out);

}  // namespace strata::rbd
