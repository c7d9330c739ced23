#include "filestore/posix_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "strata/cpp/plugin_support.hpp"

namespace strata::filestore {

UniqueFd &UniqueFd::operator=(UniqueFd &&o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void throw_errno(int err, const std::string &what) {
  throw sdk::Error(err, what + ": " + std::strerror(err));
}

UniqueFd open_file(const std::string &path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) throw_errno(errno, "open " + path);
  return UniqueFd(fd);
}

UniqueFd open_file_if_exists(const std::string &path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return UniqueFd();
    throw_errno(errno, "open " + path);
  }
  return UniqueFd(fd);
}

UniqueFd open_dir(const std::string &path) { return open_file(path, O_RDONLY | O_DIRECTORY); }

void pwrite_all(int fd, const void *data, size_t len, uint64_t offset, std::string_view what) {
  const char *p = static_cast<const char *>(data);
  while (len > 0) {
    ssize_t n = ::pwrite(fd, p, len, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "write to " + std::string(what));
    }
    p += n;
    len -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

size_t pread_full(int fd, void *buf, size_t len, uint64_t offset, std::string_view what) {
  char *p = static_cast<char *>(buf);
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, p + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "read from " + std::string(what));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

void fsync_fd(int fd, std::string_view what) {
  if (::fsync(fd) != 0) throw_errno(errno, "fsync " + std::string(what));
}

void fdatasync_fd(int fd, std::string_view what) {
  if (::fdatasync(fd) != 0) throw_errno(errno, "fdatasync " + std::string(what));
}

void sync_file_system(int fd, std::string_view what) {
  if (::syncfs(fd) != 0) throw_errno(errno, "syncfs " + std::string(what));
}

void truncate_fd(int fd, uint64_t size, std::string_view what) {
  while (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (errno != EINTR) throw_errno(errno, "truncate " + std::string(what));
  }
}

FileInfo stat_fd(int fd, std::string_view what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) throw_errno(errno, "stat " + std::string(what));
  return {static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_blocks) * 512,
          static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_nlink)};
}

std::optional<FileInfo> stat_path(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_errno(errno, "stat " + path);
  }
  return FileInfo{static_cast<uint64_t>(st.st_size), static_cast<uint64_t>(st.st_blocks) * 512,
                  static_cast<uint64_t>(st.st_ino)};
}

void make_dir(const std::string &path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) throw_errno(errno, "mkdir " + path);
}

bool path_exists(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  throw_errno(errno, "stat " + path);
}

bool unlink_if_exists(const std::string &path) {
  if (::unlink(path.c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  throw_errno(errno, "unlink " + path);
}

std::vector<std::string> list_dir(const std::string &path) {
  std::unique_ptr<DIR, int (*)(DIR *)> dir(::opendir(path.c_str()), ::closedir);
  if (!dir) throw_errno(errno, "opendir " + path);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent *e = ::readdir(dir.get())) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  if (errno != 0) throw_errno(errno, "readdir " + path);
  return names;
}

}  // namespace strata::filestore
