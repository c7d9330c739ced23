#include "kv/store_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "strata/cpp/plugin_support.hpp"

namespace strata::kv {

namespace {

std::string marker_path(const std::string &store_path) { return store_path + "/kv_engine"; }

[[noreturn]] void fail_errno(const std::string &what, const std::string &file) {
  int e = errno;
  throw sdk::Error(e, what + " " + file + ": " + std::strerror(e));
}

void fsync_path(const std::string &file, int flags) {
  int fd = ::open(file.c_str(), flags | O_CLOEXEC);
  if (fd < 0) fail_errno("open", file);
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) fail_errno("fsync", file);
}

}  // namespace

std::string database_dir(const std::string &store_path) { return store_path + "/db"; }

std::optional<kvdb::Engine> read_engine_marker(const std::string &store_path) {
  std::ifstream in(marker_path(store_path));
  if (!in) return std::nullopt;
  std::string name;
  std::getline(in, name);
  try {
    return kvdb::engine_from_name(name);
  } catch (const sdk::Error &e) {
    throw sdk::Error(EUCLEAN, marker_path(store_path) + ": " + e.what());
  }
}

void write_engine_marker(const std::string &store_path, kvdb::Engine engine) {
  std::string final_path = marker_path(store_path);
  std::string tmp = final_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kvdb::engine_name(engine) << "\n";
    out.flush();
    if (!out) fail_errno("write", tmp);
  }
  fsync_path(tmp, O_RDONLY);
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) fail_errno("rename to", final_path);
  fsync_path(store_path, O_RDONLY | O_DIRECTORY);
}

}  // namespace strata::kv
