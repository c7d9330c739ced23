// The FUSE low-level operations of a mount that holds one file: the root
// directory (inode 1) and the device as a regular file (inode 2) in it.
// Names and attributes are answered at once (image_file.cpp); every data
// request goes to the BlockDevice and is answered from its Done, on
// whichever thread that runs, so no FUSE worker waits for the device
// (image_file_io.cpp); SEEK_DATA/SEEK_HOLE follow the device's extents
// (image_file_seek.cpp). image_file_ops.cpp binds these methods to
// libfuse's fuse_lowlevel_ops.
//
// Threading: every method runs on a FUSE worker thread, many at once; the
// only state that changes is atomic (counters, a handle's "written" flag)
// or behind RequestsInFlight's lock.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "block_device.h"
#include "export_counters.h"
#include "requests_in_flight.h"

namespace strata::rbd {

using ExportLog = std::function<void(int level, const std::string &line)>;

class ImageFile {
 public:
  static constexpr fuse_ino_t kRootIno = FUSE_ROOT_ID;
  static constexpr fuse_ino_t kFileIno = 2;

  // max_io: the largest read or write the kernel may send (max_write).
  ImageFile(std::shared_ptr<BlockDevice> device, std::string file_name, uint32_t max_io,
            ExportLog log);
  ~ImageFile();  // frees the handles no release came for (the connection ended)
  ImageFile(const ImageFile &) = delete;
  ImageFile &operator=(const ImageFile &) = delete;

  // The operations table; its userdata must be this ImageFile.
  static const fuse_lowlevel_ops &ops();

  FileExportStats stats() const { return counters_.snapshot(); }
  // Returns once every device request started so far has been answered.
  void wait_idle() { in_flight_.wait_idle(); }
  void log(int level, const std::string &line) const {
    if (log_) log_(level, line);
  }

  // image_file.cpp: connection, names, attributes, handles.
  void init(fuse_conn_info *conn);
  void lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
  void getattr(fuse_req_t req, fuse_ino_t ino);
  void setattr(fuse_req_t req, fuse_ino_t ino, const struct stat &attr, int to_set);
  void readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off);
  void statfs(fuse_req_t req);
  void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info *fi);
  void release(fuse_req_t req, fuse_file_info *fi);

  // image_file_io.cpp: data, all answered from the device's Done.
  void read(fuse_req_t req, size_t size, off_t off);
  void write(fuse_req_t req, const char *buf, size_t size, off_t off, fuse_file_info *fi);
  void flush(fuse_req_t req, fuse_file_info *fi);  // close(2)
  void fsync(fuse_req_t req, fuse_file_info *fi);
  void fallocate(fuse_req_t req, int mode, off_t off, off_t len);

  // image_file_seek.cpp.
  void lseek(fuse_req_t req, off_t off, int whence);

 private:
  // What one open(2) of the file keeps: whether it wrote since its last
  // flush, so that close(2) flushes the device only after writes.
  struct Handle {
    std::atomic<bool> wrote{false};
  };
  static Handle &handle(fuse_file_info *fi) { return *reinterpret_cast<Handle *>(fi->fh); }

  struct stat attr_of(fuse_ino_t ino) const;
  // Starts a device flush and answers req with its result.
  void flush_device(fuse_req_t req);
  // A Done that answers req: `ok` on success (it sends the reply), else
  // fuse_reply_err; it also ends the request's count in flight (begun
  // here) and counts errors.
  Done answer(fuse_req_t req, std::function<void()> ok);

  const std::shared_ptr<BlockDevice> device_;
  const std::string file_name_;
  const uint64_t size_;
  const uint32_t max_io_;
  const bool read_only_;
  const ExportLog log_;
  const timespec mounted_at_;  // the file's times: a device has none of its own
  ExportCounters counters_;
  RequestsInFlight in_flight_;
  std::mutex handles_mu_;
  std::unordered_set<Handle *> handles_;  // guarded by handles_mu_: open, not yet released
};

}  // namespace strata::rbd
