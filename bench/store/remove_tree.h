// Removing a bench store's directory, including what a plain recursive
// delete cannot: read-only btrfs snapshots the btrfs backend leaves inside.
#pragma once

#include <string>

#include "common/status.h"

namespace strata::store_bench {

// Removes `dir` and everything below it. Subvolumes (read-only snapshots
// included) are deleted with `btrfs subvolume delete`, innermost first.
Status remove_tree(const std::string &dir);

}  // namespace strata::store_bench
