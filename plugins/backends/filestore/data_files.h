// The directory of object data files: `<dir>/<fan-out>/<file name>` (see
// file_id.h), with an LRU cache of open descriptors in front of it.
//
// Thread-safe. The apply thread creates and removes files; readers only open.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "filestore/fd_cache.h"
#include "filestore/file_id.h"

namespace strata::filestore {

class DataFiles {
 public:
  DataFiles(std::string dir, size_t fd_cache_size);

  // Creates the directory and its fan-out sub-directories (idempotent).
  static void create_layout(const std::string &dir);

  const std::string &dir() const { return dir_; }
  std::string path(FileId id) const;

  // A fresh, empty data file; an existing file of that id (left by an earlier
  // application of the same op before a crash) is truncated.
  SharedFd create(FileId id);
  // Creates file `id` under a temporary name, lets `fill(fd)` write it,
  // fsyncs it, renames it into place and fsyncs the directory: the name
  // `id` then only ever refers to a complete, durable file.
  SharedFd create_durably(FileId id, const std::function<void(int fd)> &fill);
  bool exists(FileId id) const { return path_exists(path(id)); }
  // The file for modification. A missing file is re-created empty: the index
  // got ahead of the files before a crash, and the replayed ops refill it.
  SharedFd open_for_write(FileId id);
  // The file for reading; null if it does not exist.
  SharedFd open_for_read(FileId id);
  // Unlinks the file (no error if already gone) after evicting its descriptor.
  void remove(FileId id);
  // Closes every cached descriptor.
  void forget_all() { cache_.clear(); }

  struct Listing {
    std::vector<FileId> files;
    std::vector<std::string> strays;  // names that are not data files
  };
  // Every file present, for fsck.
  Listing list() const;

 private:
  std::string dir_;
  FdCache cache_;
};

}  // namespace strata::filestore
