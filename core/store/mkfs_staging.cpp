#include "store/mkfs_staging.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "store/store_meta.h"

namespace strata::store {

namespace fs = std::filesystem;

namespace {

void fsync_dir(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

Result<std::string> make_temp_dir(const std::string &pattern) {
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return Status::Error(errno, "cannot create a temporary directory " + pattern);
  return std::string(buf.data());
}

}  // namespace

Result<std::unique_ptr<MkfsStaging>> MkfsStaging::begin(const std::string &dir_in, bool force) {
  if (dir_in.empty()) return Status::Error(EINVAL, "mkfs: no store directory given");
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  fs::path parent = dir.parent_path();
  std::string name = dir.filename().string();
  if (name.empty()) {  // "dir/" normalises to a trailing empty name
    name = parent.filename().string();
    parent = parent.parent_path();
  }
  const std::string d = (parent / name).string();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::Error(ec.value(), "cannot create " + parent.string());

  bool inside = false;
  struct stat st_dir {
  }, st_parent{};
  if (::stat(d.c_str(), &st_dir) == 0) {
    if (!S_ISDIR(st_dir.st_mode)) return Status::Error(ENOTDIR, d + " is not a directory");
    if (fs::exists(d + "/" + StoreMeta::kFileName))
      return Status::Error(
          EEXIST, "a Strata store already exists in " + d + (force ? "" : " (--force erases it)"));
    if (!fs::is_empty(d, ec)) {
      if (!force)
        return Status::Error(ENOTEMPTY, d + " is not empty; mkfs makes a store only in an empty "
                                            "or new directory (--force erases what it holds)");
    }
    if (::stat(parent.c_str(), &st_parent) != 0)
      return Status::Error(errno, "cannot stat " + parent.string());
    inside = st_dir.st_dev != st_parent.st_dev || st_dir.st_ino == st_parent.st_ino;
  } else if (errno != ENOENT) {
    return Status::Error(errno, "cannot stat " + d);
  }
  if (force && fs::exists(d, ec)) {
    // A store already there is erased too: --force is the operator saying so.
    for (const fs::directory_entry &e : fs::directory_iterator(d, ec)) {
      fs::remove_all(e.path(), ec);
      if (ec) return Status::Error(ec.value(), "--force: cannot remove " + e.path().string());
    }
  }
  auto build = make_temp_dir(inside ? d + "/.mkfs-XXXXXX"
                                    : (parent / ("." + name + ".mkfs-XXXXXX")).string());
  if (!build.ok()) return build.status();
  return std::unique_ptr<MkfsStaging>(new MkfsStaging(d, *build, inside));
}

MkfsStaging::~MkfsStaging() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(build_, ec);
}

Status MkfsStaging::commit() {
  if (!inside_) {
    // rename(2) replaces an empty directory in one step.
    if (::rename(build_.c_str(), dir_.c_str()) != 0)
      return Status::Error(errno, "cannot move the new store " + build_ + " to " + dir_);
    committed_ = true;
    fsync_dir(fs::path(dir_).parent_path().string());
    return Status::OK();
  }
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const fs::directory_entry &e : fs::directory_iterator(build_, ec))
    if (e.path().filename() != StoreMeta::kFileName) entries.push_back(e.path());
  if (ec) return Status::Error(ec.value(), "cannot list " + build_);
  entries.push_back(fs::path(build_) / StoreMeta::kFileName);  // the commit point
  for (const fs::path &from : entries) {
    const std::string to = dir_ + "/" + from.filename().string();
    if (::rename(from.c_str(), to.c_str()) != 0) {
      int e = errno;
      // Put back what moved, so that nothing of a half store stays.
      for (const fs::path &f : entries) {
        const std::string moved = dir_ + "/" + f.filename().string();
        if (f == from) break;
        ::rename(moved.c_str(), f.c_str());
      }
      return Status::Error(e, "cannot move " + from.string() + " to " + to);
    }
  }
  committed_ = true;
  fs::remove(build_, ec);
  fsync_dir(dir_);
  return Status::OK();
}

}  // namespace strata::store
