// Block images striped over objects (docs/BLOCK.md): the on-disk format,
// the administrative calls (`strata image ...`) and an open image's I/O.
// Everything goes through a client routine table (strata/client_api.h),
// so the same code serves the rbd frontend plugin (its host's table) and
// the `strata image` commands (the client library's own table).
//
// Format, per pool (names are the format; see docs/BLOCK.md):
//   rbd_directory               omap "name_<NAME>" -> image id, "id_<ID>" -> name
//   rbd_header.<ID>             omap: size, object_size, features,
//                               snap_seq, snap_<SNAPID> records, parent,
//                               created; xattr "lock" (the exclusive lock)
//   rbd_data.<ID>.<OBJNO 16 hex>  the data; a missing object reads as zeros
//   (snapshots are the OSDs' object snapshots; clone parents: see docs/BLOCK.md)
// An image id is 16 hex digits, unique in its pool; data objects never
// change names when an image is renamed.
//
// Errors: administrative calls throw strata::sdk::Error (negative errno +
// a message naming the pool, image, snapshot or object); I/O reports a
// negative errno through the Done callback (block_device.h) and keeps the
// last failure's message for last_error().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "block_device.h"
#include "strata/client_api.h"

namespace strata::rbd {

constexpr uint32_t kDefaultObjectSize = 4u << 20;
constexpr uint32_t kMinObjectSize = 4096;      // object sizes are powers of two
constexpr uint32_t kMaxObjectSize = 32u << 20;  // in [4 KiB, 32 MiB]

struct SnapInfo {
  uint64_t id = 0;        // grows with every snapshot of the image
  std::string name;
  uint64_t size = 0;      // the image's size when it was taken
  uint64_t created_ns = 0;
  uint32_t children = 0;  // clones made from it (rm refuses while > 0)
  // Of a clone's snapshot: the bytes that read through to the parent (the
  // clone's overlap then, at most its size); 0 when none do.
  uint64_t parent_overlap = 0;
};

// Where a clone reads what it has not written itself.
struct ParentSpec {
  std::string pool;
  std::string image;       // name (as of the clone)
  std::string image_id;
  uint64_t snap_id = 0;
  std::string snap_name;
  uint64_t overlap = 0;    // bytes of the child that may read through
};

struct ImageInfo {
  std::string pool, name, id;
  uint64_t size = 0;
  uint32_t object_size = kDefaultObjectSize;
  uint64_t created_ns = 0;
  std::vector<SnapInfo> snaps;         // by id
  std::optional<ParentSpec> parent;    // set for a clone until flattened
  std::string lock_owner;              // "" when nobody holds the lock
  uint64_t lock_expires_ns = 0;
};

struct CreateOptions {
  uint64_t size = 0;                        // bytes; need not be a multiple of anything
  uint32_t object_size = kDefaultObjectSize;
};

// The images of one pool. api and io outlive it; calls are synchronous
// and thread-safe.
class ImageStore {
 public:
  // cluster (optional, outlives the store) reaches other pools: a clone's
  // parents there (clone into another pool, flatten, remove, snap rm of
  // such a clone). Without it they are -EOPNOTSUPP.
  ImageStore(const strata_client_api *api, strata_ioctx_t io, std::string pool_name,
             strata_cluster_t cluster = nullptr);
  ~ImageStore();
  ImageStore(const ImageStore &) = delete;
  ImageStore &operator=(const ImageStore &) = delete;

  void create(const std::string &name, const CreateOptions &opts);  // -EEXIST, -EINVAL
  std::vector<std::string> list();                                   // sorted
  ImageInfo info(const std::string &name);                           // -ENOENT
  // Shrinking removes the data past the new end (objects wholly past it,
  // the tail of the one it falls in); growing reads as zeros. -EBUSY when
  // another live holder has the lock.
  void resize(const std::string &name, uint64_t new_size);
  // Removes the header, the data objects and the directory entries.
  // -ENOTEMPTY with snapshots, -EBUSY while locked by a live holder.
  void remove(const std::string &name);
  void rename(const std::string &from, const std::string &to);
  // Bytes allocated (data objects' sizes summed), of the head or of a
  // snapshot; sparse ranges inside an object count (an estimate, like du).
  uint64_t du(const std::string &name, const std::string &snap = "");

  SnapInfo snap_create(const std::string &name, const std::string &snap);
  void snap_remove(const std::string &name, const std::string &snap);   // -EBUSY with children
  // The head becomes the snapshot's content (and size). -EBUSY while
  // locked by a live holder.
  void snap_rollback(const std::string &name, const std::string &snap);
  // A new image `child` (in child_store's pool, this one or another) that
  // reads through to name@snap until written; name may be a clone itself
  // (reads go on through its parents).
  void clone(const std::string &name, const std::string &snap, ImageStore &child_store,
             const std::string &child, const CreateOptions &opts_or_zero = {});
  // Copies everything the clone's head reads from its parents into it.
  // The parent link goes unless a snapshot of the clone still reads
  // through it: then the head's overlap becomes 0, and the link goes with
  // the last such snapshot.
  void flatten(const std::string &name);

  const std::string &pool() const;
  const strata_client_api *api() const;
  strata_ioctx_t ioctx() const;
  // Another pool's ioctx (owned by the store), for a clone's parents: 0 or
  // -errno (-EOPNOTSUPP without a cluster).
  int pool_ioctx(const std::string &pool, strata_ioctx_t *out);

 private:
  const strata_client_api *api_;
  strata_ioctx_t io_;
  std::string pool_;
  strata_cluster_t cluster_;
  std::mutex m_;
  std::map<std::string, strata_ioctx_t> other_pools_;  // guarded by m_
};

struct OpenOptions {
  bool read_only = false;
  std::string snap;  // non-empty: open that snapshot, read-only
  // Read-write opens take the exclusive lock: -EBUSY when a live holder
  // has it (its lease has not expired). The lease is renewed in the
  // background every lock_renew_ms and expires lock_lease_ms after the
  // last renewal, so a dead holder's lock frees itself.
  uint32_t lock_lease_ms = 30000;
  uint32_t lock_renew_ms = 5000;
  // Who holds the lock, for `image info`: e.g. "nbd serve pid 1234 on
  // host". The client's instance id is added.
  std::string lock_description;
  // Read-ahead for sequential readers: once reads arrive in order, up to
  // this many bytes ahead are fetched, fanned out over objects. 0: off.
  uint64_t readahead_max_bytes = 8u << 20;
  uint32_t max_inflight_ops = 128;  // object operations in flight per image
  // Write-back: plain writes (not FUA) are answered once issued, while
  // the bytes so answered and still in flight stay under this; a flush
  // waits for them and reports their first error (write_back.h). 0:
  // every write is answered when durable on every replica.
  uint64_t writeback_max_bytes = 32u << 20;
};

struct ImageStats {
  uint64_t reads = 0, writes = 0, discards = 0, zeroes = 0, flushes = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t object_reads = 0, object_writes = 0, object_removes = 0;
  uint64_t readahead_hits = 0, readahead_bytes = 0;
  uint64_t cow_copies = 0;   // objects preserved for a snapshot (first write with its context)
  uint64_t copy_ups = 0;     // objects copied up from a clone's parent
  uint64_t errors = 0;
  uint64_t writeback_bytes = 0;  // gauge: writes answered early, not landed yet
};

// An open image (or snapshot): a BlockDevice. close() (or the destructor)
// waits for requests in flight and releases the lock.
class Image : public BlockDevice {
 public:
  // Throws Error: -ENOENT (no image / snapshot), -EBUSY (locked), ...
  static std::unique_ptr<Image> open(const strata_client_api *api, strata_cluster_t cluster,
                                     const std::string &pool, const std::string &name,
                                     const OpenOptions &opts);
  virtual ~Image() = default;

  virtual ImageInfo info() = 0;  // as of open, size kept current
  virtual ImageStats stats() const = 0;
  virtual std::string last_error() const = 0;
  // Waits for everything in flight, stops the lock renewal, releases the
  // lock. 0 or the first error a request in flight met.
  virtual int close() = 0;
};

}  // namespace strata::rbd
