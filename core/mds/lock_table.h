// Advisory file locks the MDS arbitrates between sessions: POSIX byte
// ranges (per owner, split and replaced like fcntl) and flock whole-file
// locks, in separate namespaces as on Linux.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "mds/meta_types.h"

namespace strata::mds {

enum class LockKindM : uint8_t { kPosix = 0, kFlock = 1 };
enum class LockTypeM : uint8_t { kRead = 0, kWrite = 1, kUnlock = 2 };

struct FileLock {
  uint64_t session = 0;
  uint64_t owner = 0;
  uint32_t pid = 0;
  LockKindM kind = LockKindM::kPosix;
  LockTypeM type = LockTypeM::kRead;
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive; UINT64_MAX: to the end of file and beyond
};

class LockTable {
 public:
  // The first held lock that conflicts with `want`, if any.
  std::optional<FileLock> conflict(Ino ino, const FileLock &want) const;
  // Applies `l` (a lock or an unlock) for its owner; the caller checked
  // conflicts. Returns true when something was released (waiters may go).
  bool apply(Ino ino, const FileLock &l);
  // Drops every lock of a session; returns the inodes that changed.
  std::vector<Ino> drop_session(uint64_t session);
  size_t count() const;

 private:
  std::map<Ino, std::vector<FileLock>> locks_;
};

}  // namespace strata::mds
