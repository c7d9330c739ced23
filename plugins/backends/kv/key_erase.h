// Removing every key of a range inside a transaction, cheaply for the sizes
// objects usually have.
#pragma once

#include <cstddef>
#include <string>

#include "kvdb/kvdb.h"

namespace strata::kv {

// Removes every key in [begin, end) (end empty = unbounded) as seen by `txn`.
// Few keys (the common small object) become point deletes found with one
// scan; past `point_limit` keys one range delete covers the rest, so a huge
// object costs one tombstone instead of one per key.
// Returns the number of keys visited (capped at point_limit + 1).
size_t erase_keys(kvdb::Transaction &txn, const std::string &begin, const std::string &end,
                  size_t point_limit = 64);

}  // namespace strata::kv
