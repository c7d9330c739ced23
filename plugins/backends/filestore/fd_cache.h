// A bounded least-recently-used cache of open data-file descriptors.
//
// Opening and closing a file per op would cost two syscalls and a path walk
// on every 4 KiB write; the cache keeps the hot files open instead. Handles
// are shared: an evicted descriptor stays open until the last reader that
// holds it lets go, so eviction never closes a descriptor under a pread.
//
// Thread-safe: readers and the apply thread share one cache.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "filestore/file_id.h"
#include "filestore/posix_file.h"

namespace strata::filestore {

using SharedFd = std::shared_ptr<const UniqueFd>;

class FdCache {
 public:
  explicit FdCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The cached descriptor of `id`, or null.
  SharedFd find(FileId id);
  // Caches `fd` for `id` and returns the cached handle. If another thread
  // cached one meanwhile, that one wins and `fd` is closed.
  SharedFd insert(FileId id, UniqueFd fd);
  // The cached descriptor, or the result of `open()` (a UniqueFd) cached;
  // null when open() returns an empty UniqueFd. open() runs without the lock.
  template <class Open>
  SharedFd get(FileId id, Open &&open) {
    if (SharedFd fd = find(id)) return fd;
    UniqueFd fd = open();
    if (!fd) return nullptr;
    return insert(id, std::move(fd));
  }
  // Forgets `id` (call before unlinking its file, so that a file re-created
  // under the same id is not served from the old inode).
  void erase(FileId id);
  void clear();
  size_t size() const;

 private:
  using Entry = std::pair<FileId, SharedFd>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // GUARDED_BY(mu_); front = most recently used
  std::unordered_map<FileId, std::list<Entry>::iterator, FileIdHash> index_;  // GUARDED_BY(mu_)
};

}  // namespace strata::filestore
