#include "sparse_data.h"

#include <algorithm>
#include <cstring>

namespace mem {

std::string &SparseData::page(uint64_t index) {
  auto it = pages_.find(index);
  if (it == pages_.end()) it = pages_.emplace(index, std::string(kPageSize, '\0')).first;
  return it->second;
}

void SparseData::write(uint64_t offset, std::string_view data) {
  uint64_t pos = 0;
  while (pos < data.size()) {
    uint64_t at = offset + pos;
    uint64_t in_page = at % kPageSize;
    uint64_t n = std::min<uint64_t>(kPageSize - in_page, data.size() - pos);
    std::memcpy(page(at / kPageSize).data() + in_page, data.data() + pos, n);
    pos += n;
  }
  size_ = std::max(size_, offset + data.size());
}

uint64_t SparseData::read(uint64_t offset, uint64_t length, char *buf) const {
  if (offset >= size_) return 0;
  uint64_t n = std::min(length, size_ - offset);
  std::memset(buf, 0, n);
  // Visit only present pages overlapping [offset, offset + n).
  for (auto it = pages_.lower_bound(offset / kPageSize);
       it != pages_.end() && it->first * kPageSize < offset + n; ++it) {
    uint64_t page_start = it->first * kPageSize;
    uint64_t from = std::max(offset, page_start);
    uint64_t to = std::min(offset + n, page_start + kPageSize);
    std::memcpy(buf + (from - offset), it->second.data() + (from - page_start), to - from);
  }
  return n;
}

void SparseData::truncate(uint64_t new_size) {
  if (new_size < size_) {
    // Drop whole pages past the new end, zero the tail of the partial one.
    pages_.erase(pages_.lower_bound((new_size + kPageSize - 1) / kPageSize), pages_.end());
    if (new_size % kPageSize != 0) {
      auto it = pages_.find(new_size / kPageSize);
      if (it != pages_.end())
        std::memset(it->second.data() + new_size % kPageSize, 0, kPageSize - new_size % kPageSize);
    }
  }
  size_ = new_size;
}

void SparseData::zero(uint64_t offset, uint64_t length) {
  if (offset >= size_) return;
  uint64_t end = std::min(size_, offset + std::min(length, UINT64_MAX - offset));
  for (auto it = pages_.lower_bound(offset / kPageSize);
       it != pages_.end() && it->first * kPageSize < end;) {
    uint64_t page_start = it->first * kPageSize;
    uint64_t from = std::max(offset, page_start);
    uint64_t to = std::min(end, page_start + kPageSize);
    if (from == page_start && to == page_start + kPageSize) {
      it = pages_.erase(it);  // a page of zeros need not be kept
    } else {
      std::memset(it->second.data() + (from - page_start), 0, to - from);
      ++it;
    }
  }
}

void SparseData::restore(uint64_t size, std::map<uint64_t, std::string> pages) {
  size_ = size;
  pages_ = std::move(pages);
}

std::string SparseData::problems() const {
  for (const auto &[index, bytes] : pages_) {
    if (bytes.size() != kPageSize)
      return "page " + std::to_string(index) + " has " + std::to_string(bytes.size()) + " bytes";
    uint64_t page_start = index * kPageSize;
    if (page_start >= size_)
      return "page " + std::to_string(index) + " lies past the size " + std::to_string(size_);
    for (uint64_t i = size_ - page_start; i < kPageSize; ++i)
      if (bytes[i] != '\0') return "non-zero byte past the size in page " + std::to_string(index);
  }
  return "";
}

}  // namespace mem
