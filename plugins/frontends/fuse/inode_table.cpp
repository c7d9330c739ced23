#include "inode_table.h"

namespace strata::fuse {

void InodeTable::looked_up(uint64_t ino) {
  std::lock_guard<std::mutex> l(mu_);
  ++nlookup_[ino];
}

bool InodeTable::forget(uint64_t ino, uint64_t nlookup) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = nlookup_.find(ino);
  if (it == nlookup_.end()) return true;
  if (it->second > nlookup) {
    it->second -= nlookup;
    return false;
  }
  nlookup_.erase(it);
  return true;
}

uint64_t InodeTable::lookups(uint64_t ino) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = nlookup_.find(ino);
  return it == nlookup_.end() ? 0 : it->second;
}

size_t InodeTable::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return nlookup_.size();
}

}  // namespace strata::fuse
