#include "filestore/data_files.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>

namespace strata::filestore {

DataFiles::DataFiles(std::string dir, size_t fd_cache_size)
    : dir_(std::move(dir)), cache_(fd_cache_size) {}

void DataFiles::create_layout(const std::string &dir) {
  make_dir(dir);
  for (unsigned i = 0; i < kFanOut; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "/%02x", i);
    make_dir(dir + name);
  }
}

std::string DataFiles::path(FileId id) const { return dir_ + "/" + relative_path(id); }

SharedFd DataFiles::create(FileId id) {
  // Drop a descriptor of an earlier inode under this id before replacing it.
  cache_.erase(id);
  return cache_.insert(id, open_file(path(id), O_RDWR | O_CREAT | O_TRUNC));
}

SharedFd DataFiles::create_durably(FileId id, const std::function<void(int fd)> &fill) {
  std::string final_path = path(id);
  std::string tmp = final_path + ".tmp";
  UniqueFd fd = open_file(tmp, O_RDWR | O_CREAT | O_TRUNC);
  fill(fd.get());
  fsync_fd(fd.get(), tmp);
  cache_.erase(id);
  if (::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw_errno(errno, "rename " + tmp + " to " + final_path);
  std::string dir = dir_ + "/" + fan_out_dir(id);
  UniqueFd dir_fd = open_dir(dir);
  fsync_fd(dir_fd.get(), dir);
  return cache_.insert(id, std::move(fd));
}

SharedFd DataFiles::open_for_write(FileId id) {
  return cache_.get(id, [&] { return open_file(path(id), O_RDWR | O_CREAT); });
}

SharedFd DataFiles::open_for_read(FileId id) {
  return cache_.get(id, [&] { return open_file_if_exists(path(id), O_RDWR); });
}

void DataFiles::remove(FileId id) {
  cache_.erase(id);
  unlink_if_exists(path(id));
}

DataFiles::Listing DataFiles::list() const {
  Listing out;
  for (unsigned i = 0; i < kFanOut; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "%02x", i);
    std::string sub = dir_ + "/" + name;
    if (!path_exists(sub)) {
      out.strays.push_back(std::string(name) + " (missing directory)");
      continue;
    }
    for (const std::string &file : list_dir(sub)) {
      auto id = parse_file_name(file);
      if (id && fan_out_dir(*id) == name)
        out.files.push_back(*id);
      else
        out.strays.push_back(std::string(name) + "/" + file);
    }
  }
  return out;
}

}  // namespace strata::filestore
