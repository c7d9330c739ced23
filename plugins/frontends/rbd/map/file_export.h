// One BlockDevice exposed as one regular file over FUSE (as nbdfuse does),
// for kernels with no nbd or ublk driver: `strata image map POOL/NAME --at
// DIR` mounts DIR with a single file (named after the image, or "disk"
// when asked), so that `losetup --direct-io=on DIR/NAME` gives a real
// block device. libfuse3 low-level API.
//
// The file's size is the device's; reads and writes go straight to the
// device (direct I/O from the kernel's side, no page cache in between, so
// the loop device's own O_DIRECT works and nothing is cached twice);
// fsync/fdatasync flush the device; fallocate(PUNCH_HOLE|KEEP_SIZE) and
// ZERO_RANGE discard / zero; lseek SEEK_DATA/SEEK_HOLE follow extents();
// a read-only device gives a 0444 file and EROFS on writes. The file
// cannot be created, removed, renamed or truncated (EPERM).
//
// Threading: start/stop from one controlling thread; stats() from any.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "block_device.h"

namespace strata::rbd {

struct FileExportOptions {
  std::string mountpoint;   // an existing empty directory
  std::string file_name;    // the one file in it
  uint32_t max_write = 1u << 20;  // FUSE max_write / max_read
  bool allow_other = false;       // FUSE allow_other (needs user_allow_other unless root)
  std::function<void(int level, const std::string &line)> log;
  // Called once when the mount ends on its own (fusermount3 -u, umount):
  // result 0, or -errno with a reason. Runs on the export's own thread:
  // it must not call stop() (which joins that thread), only signal the
  // controlling thread to.
  std::function<void(int result, const std::string &reason)> on_unmounted;
};

struct FileExportStats {
  uint64_t reads = 0, writes = 0, flushes = 0, discards = 0, errors = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
};

class FileExport {
 public:
  // Mounts and starts serving (its own threads). Throws strata::sdk::Error
  // naming the mount point when the mount fails.
  static std::unique_ptr<FileExport> start(std::shared_ptr<BlockDevice> device,
                                           FileExportOptions opts);
  virtual ~FileExport() = default;  // stops if stop() was not called
  // Unmounts (if still mounted), waits for requests in flight, joins.
  virtual void stop() = 0;
  virtual FileExportStats stats() const = 0;
};

}  // namespace strata::rbd
