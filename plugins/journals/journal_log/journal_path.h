// Where a journal's medium is, given the path the host passed.
#pragma once

#include <string>

namespace strata::journal {

// `path` itself (a file, which may not exist yet, or a block device), or
// "<path>/journal" when `path` is an existing directory. Throws -EINVAL for
// an empty path.
std::string resolve_journal_path(const std::string &path);

}  // namespace strata::journal
