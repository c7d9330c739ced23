// Where a filesystem's namespace lives: the objects of its metadata pool
// and the metadata journal (docs/FILESYSTEM.md, "Objects of a filesystem"
// and "The metadata journal"). The server (mds_server) talks to this
// interface only; the real one is ObjectMetaStore (object_meta_store.h),
// tests may use MemoryMetaStore (memory_meta_store.h).
//
// Threading: every method is safe to call from any thread. submit's
// callbacks run on the store's own thread, in submission order.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "mds/meta_types.h"

namespace strata::mds {

// What a new active MDS recovers when it takes a filesystem over.
struct RecoveredState {
  Ino ino_next = kFirstUserIno;      // the next inode number to hand out
  std::vector<SessionRec> sessions;  // sessions of earlier incarnations
  std::vector<PurgeRec> pending_purges;
  uint64_t replayed_entries = 0;
  uint64_t replayed_bytes = 0;
};

struct DirPage {
  std::vector<DentryRec> entries;  // in name order
  bool end = false;                // no entries after the last one
};

struct MetaStoreStats {
  uint64_t journal_entries = 0;  // appended by this instance
  uint64_t journal_bytes_unapplied = 0;
  uint64_t journal_writes = 0;  // object writes (batches) to the journal
  uint64_t apply_writes = 0;    // object writes to directory/inode objects
  uint64_t purged_objects = 0;
};

class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // Takes the filesystem over at `incarnation` (the fs map's): fences
  // older actives (docs: "Fencing"), makes the root and stray directories
  // on a new filesystem, replays the journal into the objects. Once it
  // returns, reads see every change any earlier incarnation made durable.
  virtual Result<RecoveredState> open(uint64_t incarnation) = 0;

  // Journals `update` (batched with others: group commit) and calls
  // on_durable(OK) once it is durable, or with the error (e.g. fenced:
  // -ECANCELED: a newer incarnation took over; the MDS must stop). Reads
  // reflect the update as soon as submit returns.
  virtual void submit(MetaUpdate update, std::function<void(Status)> on_durable) = 0;

  // Someone waits for everything submitted so far to become durable (an
  // fsync, a lease recall): journal it now rather than gather more.
  virtual void hurry() {}
  // Waits until everything submitted so far is durable.
  virtual Status flush() = 0;

  // One entry of a directory, nullopt when absent.
  virtual Result<std::optional<DentryRec>> lookup(Ino dir, std::string_view name) = 0;
  // Entries of a directory after `after` (empty: from the start), at most
  // `max` of them.
  virtual Result<DirPage> list(Ino dir, std::string_view after, size_t max) = 0;
  // An inode-table entry (the root, hard-linked inodes), nullopt when absent.
  virtual Result<std::optional<InodeRec>> get_inode(Ino ino) = 0;
  // Where a primary inode was last named (its back-pointer): lets an MDS
  // that never saw it (after a failover) find it again. May be stale: the
  // caller checks the dentry. nullopt when the store keeps none.
  struct BackPointer {
    Ino parent = 0;
    std::string name;
  };
  virtual Result<std::optional<BackPointer>> back_pointer(Ino) {
    return std::optional<BackPointer>();
  }

  virtual MetaStoreStats stats() const = 0;

  // Flushes and stops the store's threads; nothing may be called after.
  virtual void close() = 0;
};

}  // namespace strata::mds
