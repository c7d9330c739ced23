#include "journal_log/journal_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

std::string resolve_journal_path(const std::string &path) {
  if (path.empty()) throw sdk::Error(EINVAL, "journal path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + "/journal";
  return path;
}

std::string creating_path(const std::string &path) { return path + ".creating"; }

namespace {

void fsync_parent_dir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    throw sdk::make_error(errno, "cannot open directory %s: %s", dir.c_str(), strerror(errno));
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0) throw sdk::make_error(e, "cannot sync directory %s: %s", dir.c_str(), strerror(e));
}

}  // namespace

void create_by_rename(const std::string &path,
                      const std::function<void(const std::string &tmp)> &build) {
  const std::string tmp = creating_path(path);
  try {
    build(tmp);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw sdk::make_error(e, "cannot move %s to %s: %s", tmp.c_str(), path.c_str(), strerror(e));
  }
  fsync_parent_dir(path);
}

}  // namespace strata::journal
