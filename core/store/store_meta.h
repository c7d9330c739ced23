// The store's identity file, <dir>/strata_store.ini: which backend and
// journal plugins it was made with, where the journal lives, and the plugin
// options fixed at mkfs. Rewritten atomically (temp file, fsync, rename,
// fsync of the directory) so that a crash leaves the old or the new one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::store {

using OptionList = std::vector<std::pair<std::string, std::string>>;

struct StoreMeta {
  static constexpr const char *kFileName = "strata_store.ini";

  std::string fsid;
  std::string backend;
  std::string journal;       // plugin name or "none"
  // File, device or /dev/shm path; relative to the store directory unless
  // absolute (mkfs writes relative paths, so that a copied store uses its
  // own copy of the journal).
  std::string journal_path;
  uint64_t journal_size = 0;
  OptionList backend_options;
  OptionList journal_options;

  static Result<StoreMeta> load(const std::string &dir);
  Status save(const std::string &dir) const;
  std::string backend_dir(const std::string &dir) const { return dir + "/backend"; }
  // Where the journal of the store in `dir` is: journal_path resolved
  // against dir; "" without a journal.
  std::string journal_location(const std::string &dir) const;
};

std::string new_fsid();

}  // namespace strata::store
