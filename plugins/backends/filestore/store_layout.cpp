#include "filestore/store_layout.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cstdio>
#include <sstream>

#include "filestore/posix_file.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::filestore::layout {

std::string marker_path(const std::string &root) { return root + "/strata_filestore"; }
std::string lock_path(const std::string &root) { return root + "/lock"; }
std::string stage_dir(const std::string &root) { return root + "/stage"; }
std::string data_dir(const std::string &live) { return live + "/data"; }
std::string meta_dir(const std::string &live) { return live + "/meta"; }

UniqueFd lock_store(const std::string &root) {
  std::string path = lock_path(root);
  UniqueFd fd = open_file(path, O_RDWR | O_CREAT);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw sdk::Error(EBUSY, "store " + root + " is already open");
    throw_errno(errno, "lock " + path);
  }
  return fd;
}

void write_marker(const std::string &root, const Marker &marker) {
  std::string text = "backend=" + marker.backend + "\nmeta_engine=" + marker.meta_engine + "\n";
  std::string tmp = marker_path(root) + ".tmp";
  {
    UniqueFd fd = open_file(tmp, O_WRONLY | O_CREAT | O_TRUNC);
    pwrite_all(fd.get(), text.data(), text.size(), 0, tmp);
    fsync_fd(fd.get(), tmp);
  }
  if (std::rename(tmp.c_str(), marker_path(root).c_str()) != 0) throw_errno(errno, "rename " + tmp);
  UniqueFd dir = open_dir(root);
  fsync_fd(dir.get(), root);
}

std::optional<Marker> read_marker(const std::string &root) {
  std::string path = marker_path(root);
  UniqueFd fd = open_file_if_exists(path, O_RDONLY);
  if (!fd) return std::nullopt;
  char buf[512];
  size_t n = pread_full(fd.get(), buf, sizeof buf, 0, path);
  std::istringstream in(std::string(buf, n));
  Marker m;
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "backend") m.backend = value;
    if (key == "meta_engine") m.meta_engine = value;
  }
  if (m.backend.empty() || m.meta_engine.empty())
    throw sdk::Error(EUCLEAN, "store marker " + path + " is damaged (no backend or meta_engine)");
  return m;
}

}  // namespace strata::filestore::layout
