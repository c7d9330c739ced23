#include "filestore/stage_area.h"

#include "filestore/data_csums.h"

#include "strata/cpp/plugin_support.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>

namespace strata::filestore {
namespace {

std::optional<uint64_t> parse_stage_name(const std::string &name) {
  uint64_t id = 0;
  auto r = std::from_chars(name.data(), name.data() + name.size(), id, 16);
  if (r.ec != std::errc() || r.ptr != name.data() + name.size() || name.size() != 16)
    return std::nullopt;
  return id;
}

// Ids start from the clock (microseconds) as well as after the highest file
// present, so that an id deleted after a checkpoint is not handed out again
// after a restart, where a stale journal record might still name it.
uint64_t first_free_id(const std::string &dir) {
  uint64_t next = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
  for (const std::string &name : list_dir(dir))
    if (auto id = parse_stage_name(name)) next = std::max(next, *id + 1);
  return std::max<uint64_t>(next, 1);
}

}  // namespace

StageArea::StageArea(std::string dir)
    : dir_(std::move(dir)), dir_fd_(open_dir(dir_)), next_id_(first_free_id(dir_)) {}

std::string StageArea::path(uint64_t id) const {
  char name[32];
  std::snprintf(name, sizeof name, "/%016llx", static_cast<unsigned long long>(id));
  return dir_ + name;
}

namespace {

constexpr size_t kDirectAlign = 4096;
// Largest single O_DIRECT write: a 4 MiB object goes down in one request
// (several smaller synchronous writes in a row leave the device idle between
// them).
constexpr size_t kMaxDirectChunk = 8 << 20;

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

// One aligned bounce buffer per submitting thread, grown on demand and kept:
// staged writes are large and frequent, so allocating per call would cost a
// page-faulting fresh mapping each time.
char *bounce_buffer(size_t len) {
  thread_local std::unique_ptr<void, FreeDeleter> buf;
  thread_local size_t cap = 0;
  if (cap < len) {
    void *p = nullptr;
    if (posix_memalign(&p, kDirectAlign, len) != 0)
      throw sdk::make_error(ENOMEM, "no memory for a %zu-byte stage buffer", len);
    buf.reset(p);
    cap = len;
  }
  return static_cast<char *>(buf.get());
}

// Writes data with O_DIRECT, then cuts the file to `len`. Whole blocks of a
// 4 KiB-aligned source (the host keeps large values aligned) go straight
// from it; anything else goes through an aligned bounce buffer, the last
// block padded with zeros. Staged writes are large and written once:
// bypassing the page cache keeps them at disk speed (this VM's buffered
// writeback is several times slower than its direct path) and does not
// evict the cache that small reads need. False if the file system refuses
// O_DIRECT; the caller then writes through the page cache.
bool write_direct(const std::string &p, const void *data, size_t len) {
  int raw = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0644);
  if (raw < 0) {
    if (errno == EINVAL) return false;
    throw sdk::make_error(errno, "cannot create stage file %s", p.c_str());
  }
  UniqueFd fd(raw);
  const char *src = static_cast<const char *>(data);
  size_t off = 0;
  if (reinterpret_cast<uintptr_t>(src) % kDirectAlign == 0) {
    // No copy: a 4 MiB object is one write from the caller's memory.
    const size_t whole = len / kDirectAlign * kDirectAlign;
    for (; off < whole; off += std::min(kMaxDirectChunk, whole - off))
      pwrite_all(fd.get(), src + off, std::min(kMaxDirectChunk, whole - off), off, p);
  }
  for (; off < len; off += kMaxDirectChunk) {
    size_t n = std::min(kMaxDirectChunk, len - off);
    size_t padded = (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    char *buf = bounce_buffer(padded);
    std::memcpy(buf, src + off, n);
    std::memset(buf + n, 0, padded - n);
    pwrite_all(fd.get(), buf, padded, off, p);
  }
  if (len % kDirectAlign && ::ftruncate(fd.get(), static_cast<off_t>(len)) != 0)
    throw sdk::make_error(errno, "cannot truncate stage file %s", p.c_str());
  fdatasync_fd(fd.get(), p);
  return true;
}

}  // namespace

uint64_t StageArea::write(const void *data, size_t len, uint64_t csum_block) {
  uint64_t id = next_id_.fetch_add(1);
  if (csum_block != 0) {
    std::vector<uint32_t> crcs = compute_csums(static_cast<const char *>(data), len, csum_block);
    std::lock_guard lock(mu_);
    csums_.emplace(id, std::move(crcs));
  }
  std::string p = path(id);
  if (!write_direct(p, data, len)) {
    UniqueFd fd = open_file(p, O_WRONLY | O_CREAT | O_EXCL);
    pwrite_all(fd.get(), data, len, 0, p);
    fdatasync_fd(fd.get(), p);
  }
  fsync_fd(dir_fd_.get(), dir_);
  return id;
}

std::vector<uint32_t> StageArea::csums(uint64_t id) const {
  std::lock_guard lock(mu_);
  auto it = csums_.find(id);
  return it == csums_.end() ? std::vector<uint32_t>{} : it->second;
}

void StageArea::mark_consumed(uint64_t id) {
  std::lock_guard lock(mu_);
  consumed_.insert(id);
}

std::vector<uint64_t> StageArea::consumed() const {
  std::lock_guard lock(mu_);
  return {consumed_.begin(), consumed_.end()};
}

void StageArea::drop_consumed(const std::vector<uint64_t> &ids) {
  for (uint64_t id : ids) unlink_if_exists(path(id));
  std::lock_guard lock(mu_);
  for (uint64_t id : ids) {
    consumed_.erase(id);
    csums_.erase(id);
  }
}

void StageArea::release(uint64_t id) {
  {
    std::lock_guard lock(mu_);
    if (consumed_.count(id))
      throw sdk::make_error(EINVAL, "stage %016llx in %s was consumed by a transaction; not released",
                            static_cast<unsigned long long>(id), dir_.c_str());
  }
  // No directory fsync: a crash that brings the file back leaves a stage no
  // transaction names, which release_unused removes at the next open.
  unlink_if_exists(path(id));
  std::lock_guard lock(mu_);
  csums_.erase(id);
}

void StageArea::release_unused() {
  std::set<uint64_t> keep;
  {
    std::lock_guard lock(mu_);
    keep = consumed_;
    std::erase_if(csums_, [&](const auto &entry) { return !keep.count(entry.first); });
  }
  for (const std::string &name : list_dir(dir_)) {
    auto id = parse_stage_name(name);
    if (!id || !keep.count(*id)) unlink_if_exists(dir_ + "/" + name);
  }
}

}  // namespace strata::filestore
