// The inodes the kernel knows (FUSE's lookup counts): every reply that
// hands the kernel an entry (lookup, create, mkdir, readdirplus...) adds
// one; forget subtracts. An inode the kernel forgot entirely may leave the
// client's state (its open-file bookkeeping, its cache entry).
//
// Threading: every method locks; safe from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace strata::fuse {

class InodeTable {
 public:
  void looked_up(uint64_t ino);
  // Returns true when the kernel holds no more references to ino.
  bool forget(uint64_t ino, uint64_t nlookup);
  uint64_t lookups(uint64_t ino) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, uint64_t> nlookup_;
};

}  // namespace strata::fuse
