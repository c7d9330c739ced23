// An object's byte stream held in memory as fixed-size pages; pages never
// written are absent and read as zeros, so a 64 MiB object with two written
// blocks costs two pages.
//
// Invariant: every byte at or past size() in a present page is zero, so
// extending the size (truncate up, write past the end) exposes zeros only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace mem {

class SparseData {
 public:
  static constexpr uint64_t kPageSize = 64 * 1024;

  uint64_t size() const { return size_; }
  // Bytes held in pages (what usage() and stat report as allocated).
  uint64_t allocated() const { return pages_.size() * kPageSize; }

  // size becomes max(size, offset + data.size()).
  void write(uint64_t offset, std::string_view data);
  // Copies min(length, size - offset) bytes (0 at or past the end) into buf
  // and returns that count.
  uint64_t read(uint64_t offset, uint64_t length, char *buf) const;
  void truncate(uint64_t new_size);
  // Zeroes [offset, offset + length) clipped to the size; the size stays.
  void zero(uint64_t offset, uint64_t length);
  void clear() { *this = SparseData(); }

  // For the image file and fsck: pages by index.
  const std::map<uint64_t, std::string> &pages() const { return pages_; }
  // Rebuilds from an image; the caller checks the invariant with problems().
  void restore(uint64_t size, std::map<uint64_t, std::string> pages);
  // A description of the first broken invariant, or "" when healthy.
  std::string problems() const;

 private:
  std::string &page(uint64_t index);  // creates a zero page when absent
  uint64_t size_ = 0;
  std::map<uint64_t, std::string> pages_;  // index -> kPageSize bytes
};

}  // namespace mem
