// Making a store atomically: mkfs builds it in a temporary directory on the
// same file system as the store directory and moves it into place at the
// end, so that a failed mkfs leaves nothing behind (no half-made store that
// neither mkfs nor fsck accepts).
//
// Where the build happens: beside the store directory (".<name>.mkfs-XXXXXX"
// in its parent), committed by one rename over the absent or empty store
// directory. A store directory that is a mount point cannot be renamed over;
// the build then happens inside it (".mkfs-XXXXXX") and commit moves each
// entry out, the store identity file last: without it there is no store.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace strata::store {

class MkfsStaging {
 public:
  // Refuses (EEXIST) a store directory that already holds a store, and
  // (ENOTEMPTY) one that holds anything else unless `force`, which erases
  // what it holds first.
  static Result<std::unique_ptr<MkfsStaging>> begin(const std::string &dir, bool force);
  // Removes the build directory unless committed.
  ~MkfsStaging();
  MkfsStaging(const MkfsStaging &) = delete;
  MkfsStaging &operator=(const MkfsStaging &) = delete;

  // Where to build the store's files.
  const std::string &build_dir() const { return build_; }
  // Moves the built store into the store directory, the identity file last.
  Status commit();

 private:
  MkfsStaging(std::string dir, std::string build, bool inside)
      : dir_(std::move(dir)), build_(std::move(build)), inside_(inside) {}
  std::string dir_, build_;
  bool inside_;  // build_ is inside dir_ (a mount point)
  bool committed_ = false;
};

}  // namespace strata::store
