// Index records of recently written objects, kept by the apply thread so
// that a transaction touching an object again need not read its record back
// from the database: every OSD write also updates its PG's log object, and
// that lookup alone was a tenth of an OSD's CPU under small writes.
//
// Only committed transactions change it (TxnApplier publishes at commit), so
// it never holds what a failed transaction wrote. Not thread-safe: the apply
// thread owns it; readers on other threads use the database.
#pragma once

#include <string>
#include <unordered_map>

#include "filestore/meta_schema.h"

namespace strata::filestore {

class RecordCache {
 public:
  // nullptr when the key is not cached (which says nothing about the object).
  const schema::ObjectRecord *find(const std::string &key) const {
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  void put(const std::string &key, const schema::ObjectRecord &rec) {
    if (map_.size() >= kMaxEntries && !map_.count(key)) map_.clear();  // cheap and bounded
    map_.insert_or_assign(key, rec);
  }
  void erase(const std::string &key) { map_.erase(key); }
  void clear() { map_.clear(); }

 private:
  static constexpr size_t kMaxEntries = 8192;
  std::unordered_map<std::string, schema::ObjectRecord> map_;
};

}  // namespace strata::filestore
