// Synchronous access to an image's directory entries and header object:
// what the administrative calls and Image::open share. Every failure
// throws sdk::Error naming the pool and the image.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "image.h"
#include "image_format.h"

namespace strata::rbd {

// One consistent read of rbd_header.<ID>.
struct Header {
  std::string id;
  uint64_t size = 0;
  uint32_t object_size = kDefaultObjectSize;
  uint64_t created_ns = 0;
  uint64_t snap_seq = 0;
  std::map<uint64_t, SnapInfo> snaps;  // by id
  std::optional<ParentSpec> parent;
  std::string lock_raw;                // the lock xattr as stored ("" = free)
  std::optional<format::LockValue> lock;
  std::vector<std::string> snap_requests;  // names asked for (snapreq_ keys)
  uint64_t version = 0;                // of the header object, as read

  // The lock is held by someone whose lease has not ended.
  bool locked_live(uint64_t now_ns) const { return lock && lock->expires_ns > now_ns; }
  const SnapInfo *find_snap(const std::string &name) const;
  uint64_t objects_for(uint64_t bytes) const { return (bytes + object_size - 1) / object_size; }
  // Objects any of the head or the snapshots may have data in.
  uint64_t max_objects() const;
  // The snapshot context changes carry: the newest live snapshot's id (0:
  // none). Not snap_seq: after the newest snapshots are removed, a context
  // naming them would make the OSDs keep clones no snapshot needs.
  uint64_t snap_context() const { return snaps.empty() ? 0 : snaps.rbegin()->first; }
};

// Where the calls go and what messages call things.
struct ImageRef {
  const strata_client_api *api = nullptr;
  strata_ioctx_t io = nullptr;
  std::string pool;
  std::string name;
};

// The image id of `name` (-ENOENT: "no image pool/name").
std::string lookup_image_id(const ImageRef &ref);
// The header of image `id` (-ENOENT if it is gone).
Header read_header(const ImageRef &ref, const std::string &id);

// The snapshot names asked of the lock holder (snapreq_ keys): a small
// read, for the holder's poll.
std::vector<std::string> list_snap_requests(const ImageRef &ref, const std::string &id);
// The names of snapshot removals asked (snaprmreq_ keys).
std::vector<std::string> list_snap_remove_requests(const ImageRef &ref, const std::string &id);

// Throws Error(rc, "<what> pool/name: <errno text>") when rc < 0.
void check_rc(int64_t rc, const ImageRef &ref, const std::string &what);
[[noreturn]] void fail(int rc, const ImageRef &ref, const std::string &what);

// The holder and the end of its lease, for -EBUSY messages.
std::string describe_holder(const format::LockValue &l, uint64_t now_ns);

}  // namespace strata::rbd
