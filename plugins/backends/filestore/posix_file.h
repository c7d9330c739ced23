// Thin wrappers over the POSIX file calls the filestore makes. Every failure
// throws strata::sdk::Error carrying the errno and a message naming the
// operation and the path, so that an error surfacing at the C boundary says
// which file failed.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::filestore {

// An owned file descriptor, closed on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
  UniqueFd &operator=(UniqueFd &&o) noexcept;
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Throws Error(err, "<what>: <strerror(err)>").
[[noreturn]] void throw_errno(int err, const std::string &what);

// open(2) with O_CLOEXEC added. Throws on failure.
UniqueFd open_file(const std::string &path, int flags, mode_t mode = 0644);
// Like open_file, but returns an empty UniqueFd when the file does not exist.
UniqueFd open_file_if_exists(const std::string &path, int flags);
// A directory opened read-only (for fsync, syncfs, ioctls, *at calls).
UniqueFd open_dir(const std::string &path);

// Writes all of [data, data+len) at `offset`, retrying short writes.
void pwrite_all(int fd, const void *data, size_t len, uint64_t offset, std::string_view what);
// Reads up to `len` bytes at `offset`; fewer only at end of file.
size_t pread_full(int fd, void *buf, size_t len, uint64_t offset, std::string_view what);

void fsync_fd(int fd, std::string_view what);
void fdatasync_fd(int fd, std::string_view what);
// syncfs(2): flushes every dirty page and the journal of the file system
// holding `fd`.
void sync_file_system(int fd, std::string_view what);
void truncate_fd(int fd, uint64_t size, std::string_view what);

struct FileInfo {
  uint64_t size = 0;
  uint64_t allocated_bytes = 0;
  uint64_t inode = 0;
  uint64_t links = 1;  // 0: the file was unlinked while open
};
FileInfo stat_fd(int fd, std::string_view what);
// stat(2) by path; nullopt when it does not exist.
std::optional<FileInfo> stat_path(const std::string &path);

// mkdir(2), succeeding when the directory already exists.
void make_dir(const std::string &path);
bool path_exists(const std::string &path);
// unlink(2); returns false (without throwing) when the file was already gone.
bool unlink_if_exists(const std::string &path);
// Names in a directory, without "." and "..", in no particular order.
std::vector<std::string> list_dir(const std::string &path);

}  // namespace strata::filestore
