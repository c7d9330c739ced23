// Byte ranges of one file held in memory: the writeback buffer (dirty
// data not yet in the objects) and the read-ahead cache (clean data read
// from the objects). Extents never overlap; adjacent ones are merged, so a
// sequential writer keeps one growing extent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace strata::fuse {

class ExtentMap {
 public:
  using Map = std::map<uint64_t, std::string>;  // file offset -> bytes

  // Stores [off, off+len), replacing what was there.
  void insert(uint64_t off, const char *data, size_t len);
  // Forgets [off, off+len) (splitting extents that straddle its ends).
  void erase(uint64_t off, uint64_t len);
  // Forgets everything at or past `size`.
  void truncate(uint64_t size);
  void clear();

  // Copies the held parts of [off, off+len) over out[0..len); the rest of
  // out is left as it was.
  void overlay(uint64_t off, size_t len, char *out) const;
  // Whether every byte of [off, off+len) is held.
  bool covers(uint64_t off, size_t len) const;
  // The held parts of [off, off+len), as a map of their own.
  ExtentMap slice(uint64_t off, size_t len) const;

  // Drops bytes from the lowest offset up until at most `max_bytes` remain
  // (a sequential reader's cache keeps what lies ahead of it).
  void shrink_to(size_t max_bytes);

  size_t bytes() const { return bytes_; }
  bool empty() const { return map_.empty(); }
  const Map &extents() const { return map_; }

 private:
  // The extent holding or ending at `off`, or the first one after it.
  Map::iterator first_touching(uint64_t off);

  Map map_;
  size_t bytes_ = 0;
};

}  // namespace strata::fuse
