#include "stage_area.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "file_io.h"
#include "strata/cpp/plugin_support.hpp"

namespace mem {

using strata::sdk::make_error;

namespace {
// Ids of the stage files in `dir` ("<decimal id>"); other names are ignored.
std::vector<uint64_t> stage_ids(const std::string &dir) {
  std::vector<uint64_t> ids;
  DIR *d = ::opendir(dir.c_str());
  if (!d) throw make_error(errno, "cannot list %s: %s", dir.c_str(), strerror(errno));
  while (dirent *e = ::readdir(d)) {
    char *end = nullptr;
    uint64_t id = std::strtoull(e->d_name, &end, 10);
    if (id > 0 && end && *end == '\0') ids.push_back(id);
  }
  ::closedir(d);
  return ids;
}
}  // namespace

StageArea::StageArea(std::string dir) : dir_(std::move(dir)) {
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST)
    throw make_error(errno, "cannot create %s: %s", dir_.c_str(), strerror(errno));
  for (uint64_t id : stage_ids(dir_))
    if (id >= next_id_) next_id_ = id + 1;
}

std::string StageArea::path(uint64_t id) const { return dir_ + "/" + std::to_string(id); }

uint64_t StageArea::put(std::string_view data) {
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
  }
  // The write happens outside the lock: staging large data must not stall
  // apply() binding an earlier stage.
  write_file_durably(path(id), data);
  sync_directory(dir_);
  return id;
}

std::string StageArea::get(uint64_t id, uint64_t length) const {
  std::string bytes;
  try {
    bytes = read_file(path(id));
  } catch (const strata::sdk::Error &e) {
    if (e.code() == -ENOENT) throw make_error(ENOENT, "no stage %llu", (unsigned long long)id);
    throw;
  }
  if (bytes.size() != length)
    throw make_error(EINVAL, "stage %llu holds %zu bytes, the transaction says %llu",
                     (unsigned long long)id, bytes.size(), (unsigned long long)length);
  return bytes;
}

void StageArea::consumed(uint64_t id, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  consumed_[id] = seq;
}

void StageArea::remove(uint64_t id) {
  if (::unlink(path(id).c_str()) != 0 && errno != ENOENT)
    throw make_error(errno, "cannot remove stage %s: %s", path(id).c_str(), strerror(errno));
}

void StageArea::release_checkpointed(uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = consumed_.begin(); it != consumed_.end();) {
    if (it->second <= seq) {
      remove(it->first);
      it = consumed_.erase(it);
    } else {
      ++it;
    }
  }
}

void StageArea::release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (consumed_.count(id)) throw make_error(EINVAL, "stage %s was consumed; not released", path(id).c_str());
  remove(id);
}

void StageArea::release_unused() {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint64_t id : stage_ids(dir_))
    if (!consumed_.count(id)) remove(id);
}

}  // namespace mem
