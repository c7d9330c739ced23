#include "kv/key_erase.h"

#include <vector>

namespace strata::kv {

size_t erase_keys(kvdb::Transaction &txn, const std::string &begin, const std::string &end,
                  size_t point_limit) {
  // Collected first: the transaction's iterators must not see it change.
  std::vector<std::string> found;
  {
    auto it = txn.iterate({begin, end});
    for (it->seek_to_first(); it->valid() && found.size() <= point_limit; it->next())
      found.emplace_back(it->key());
  }
  if (found.size() > point_limit) {
    txn.delete_range(begin, end);
  } else {
    for (const std::string &k : found) txn.del(k);
  }
  return found.size();
}

}  // namespace strata::kv
