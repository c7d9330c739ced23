// File data of the fuse frontend: a regular file's bytes striped over
// objects of the data pool (docs/FILESYSTEM.md, "File data"), reached
// through the host's client table only. Object n of inode i is
// "<i 16 hex>.<n 8 hex>"; a missing object, or a range past an object's
// end, reads as zeros.
//
// Owns: the writeback buffer of each open file (bounded per file and in
// all), read-ahead for sequential readers, splitting I/O over objects and
// issuing it in parallel. Does not own sizes: the caller (the metadata
// side, under its fileWrite lease) says how big a file is and learns from
// write() how far it grew.
//
// Threading: every method is safe to call from any thread, concurrently
// for different files and for the same file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "strata/client_api.h"

namespace strata::fuse {

// Where a file's data is: its inode and layout, or its inline bytes.
struct FileLayout {
  uint64_t ino = 0;
  int64_t pool = -1;                // data pool id
  uint32_t object_size = 4u << 20;  // bytes per object
  // Set: the file's data is inline (these bytes, then zeros up to its
  // size; its objects do not matter). Only read when FileData first takes
  // the file up: from then on its own state says where the bytes are.
  std::shared_ptr<const std::string> inline_data;
};

// Where settle_inline put a file's data.
enum class InlineOutcome {
  kUnchanged,  // nothing to report: in objects as before, or inline and not changed
  kInline,     // inline: the bytes to report
  kObjects,    // was inline, now in objects (once flushed): report that
};

struct FileDataOptions {
  size_t writeback_bytes_per_file = 8u << 20;  // buffered before writing out
  size_t writeback_bytes_total = 256u << 20;   // all files; writers block beyond
  size_t readahead_max_bytes = 16u << 20;      // window for sequential readers
  uint32_t max_inflight_ops = 64;              // object ops in flight per file
  // Told of object operations that failed (not a missing object, which
  // reads as a hole): what, which object, the errno and the client
  // library's reason. A few per second at most; the rest are counted.
  std::function<void(const std::string &)> on_error;
};

struct FileDataStats {
  uint64_t object_writes = 0, object_reads = 0, object_removes = 0;
  uint64_t bytes_written = 0, bytes_read = 0;
  uint64_t readahead_hits = 0;
  uint64_t object_errors = 0;    // failed object operations (a missing object is not one)
  uint64_t writeback_bytes = 0;  // buffered now
  uint64_t files = 0;            // files whose state (buffers, inline bytes) is held now
};

class FileData {
 public:
  // api and cluster outlive this object.
  static std::unique_ptr<FileData> create(const strata_client_api *api, strata_cluster_t cluster,
                                          FileDataOptions opts);
  virtual ~FileData() = default;

  // Reads [off, off+len) of a file of `size` bytes into out; returns the
  // bytes read (short at end of file: never past `size`) or -errno. Sees
  // this process's buffered writes.
  virtual int64_t read(const FileLayout &f, uint64_t size, uint64_t off, size_t len, char *out) = 0;

  // Buffers (or, past the buffer limits, writes out) len bytes at off.
  // Returns len or -errno (e.g. -ENOSPC, -EDQUOT when the pool is full: a
  // clear error, never a hang). The caller extends the size it keeps to
  // max(size, off + len).
  virtual int64_t write(const FileLayout &f, uint64_t off, const char *buf, size_t len) = 0;

  // Makes every write to the file so far durable in the cluster. 0 or
  // -errno (a failed write-out is reported here, once, like close(2)).
  virtual int flush(const FileLayout &f) = 0;

  // The file is now `new_size` bytes long (was old_size): drops buffered
  // data past it, removes whole objects past it and truncates the one it
  // falls in; growing needs nothing (holes read as zeros).
  virtual int truncate(const FileLayout &f, uint64_t old_size, uint64_t new_size) = 0;

  // Zeroes [off, off+len) (FALLOC_FL_PUNCH_HOLE / ZERO_RANGE): whole
  // objects inside the range are removed, partial ones zeroed.
  virtual int zero(const FileLayout &f, uint64_t off, uint64_t len) = 0;

  // The 512-byte blocks the file's objects hold (st_blocks), from the
  // objects' sizes: an estimate for sparse files.
  virtual int64_t allocated_blocks(const FileLayout &f, uint64_t size) = 0;

  // Before a flush of a file whose data was inline (docs/FILESYSTEM.md,
  // "Inline data") and changed since: if it is no bigger than `max` bytes, takes its
  // bytes (into *bytes) to be reported inline, so that the flush writes
  // nothing; else turns it into a file in objects (the flush writes its
  // inline bytes too). Never blocks on I/O.
  virtual InlineOutcome settle_inline(const FileLayout &f, uint64_t size, uint64_t max,
                                      std::string *bytes) = 0;

  // Forgets the file's read-ahead state and clean cached data (another
  // client may change it: a lease was revoked). Buffered writes are kept.
  virtual void invalidate(uint64_t ino) = 0;

  // The file is closed by everyone here: release its buffers once flushed.
  virtual void forget(uint64_t ino) = 0;
  // forget() when that needs no wait: nothing buffered or changed, no I/O
  // running. Returns whether the file's state is gone; never blocks.
  virtual bool forget_if_idle(uint64_t ino) = 0;

  // Flushes every file (unmount).
  virtual int flush_all() = 0;

  // The file is gone (its last link was removed here before its data
  // was written out): drops its buffers unwritten and returns true, if
  // none of its objects was written, truncated or zeroed through this
  // state (the MDS, which purges the objects it knows of, must not miss
  // any) and no I/O of it runs; else changes nothing and returns false.
  virtual bool discard(uint64_t ino) = 0;

  // Bytes buffered for writing, all files together (cheap: no lock).
  virtual uint64_t buffered_bytes() const = 0;

  virtual FileDataStats stats() const = 0;
};

}  // namespace strata::fuse
