// FUSE requests by operation, for the plugin's metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace strata::fuse {

enum class Op : size_t {
  kLookup,
  kForget,
  kGetattr,
  kSetattr,
  kReadlink,
  kMknod,
  kMkdir,
  kUnlink,
  kRmdir,
  kSymlink,
  kRename,
  kLink,
  kOpen,
  kCreate,
  kRead,
  kWrite,
  kFlush,
  kRelease,
  kFsync,
  kOpendir,
  kReaddir,
  kReleasedir,
  kFsyncdir,
  kStatfs,
  kSetxattr,
  kGetxattr,
  kListxattr,
  kRemovexattr,
  kAccess,
  kGetlk,
  kSetlk,
  kFlock,
  kFallocate,
  kCount
};

const char *op_name(Op op);

class OpCounters {
 public:
  void count(Op op) { n_[size_t(op)].fetch_add(1, std::memory_order_relaxed); }
  // Served from the lease cache without asking the MDS.
  void cache_hit() { hits_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t get(Op op) const { return n_[size_t(op)].load(std::memory_order_relaxed); }
  uint64_t cache_hits() const { return hits_.load(std::memory_order_relaxed); }
  // A lookup that read its directory's listing instead (prefetch_listing).
  void listing_prefetch() { prefetches_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t listing_prefetches() const { return prefetches_.load(std::memory_order_relaxed); }
  // A truncate done under fileWrite without the MDS (truncate_locally).
  void local_truncate() { truncates_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t local_truncates() const { return truncates_.load(std::memory_order_relaxed); }
  // A setattr of times alone kept for the next size report (times_locally).
  void local_times() { times_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t local_times_count() const { return times_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, size_t(Op::kCount)> n_{};
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> prefetches_{0};
  std::atomic<uint64_t> truncates_{0};
  std::atomic<uint64_t> times_{0};
};

}  // namespace strata::fuse
