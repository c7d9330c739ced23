// Where a journal's medium is, given the path the host passed.
#pragma once

#include <functional>
#include <string>

namespace strata::journal {

// `path` itself (a file, which may not exist yet, or a block device), or
// "<path>/journal" when `path` is an existing directory. Throws -EINVAL for
// an empty path.
std::string resolve_journal_path(const std::string &path);

// Where create_by_rename builds a journal file before it replaces `path`.
std::string creating_path(const std::string &path);

// Creates the journal file `path` by having `build` make it whole at
// creating_path(path), then renaming it over `path` and syncing the
// directory: a crash during create leaves either the old or the new
// journal whole, never half of each. When `build` throws or the rename
// fails, what it left is removed and the error passed on.
void create_by_rename(const std::string &path,
                      const std::function<void(const std::string &tmp)> &build);

}  // namespace strata::journal
