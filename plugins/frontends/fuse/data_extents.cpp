#include "data_extents.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace strata::fuse {

namespace {
uint64_t end_of(const ExtentMap::Map::value_type &e) { return e.first + e.second.size(); }
}  // namespace

ExtentMap::Map::iterator ExtentMap::first_touching(uint64_t off) {
  auto it = map_.upper_bound(off);
  if (it != map_.begin()) {
    auto prev = std::prev(it);
    if (end_of(*prev) >= off) return prev;
  }
  return it;
}

void ExtentMap::insert(uint64_t off, const char *data, size_t len) {
  if (len == 0) return;
  const uint64_t end = off + len;
  auto base = first_touching(off);
  if (base == map_.end() || base->first > off) {
    // Nothing holds `off`: a new extent starts there.
    base = map_.emplace_hint(base, off, std::string(data, len));
    bytes_ += len;
  } else {
    // Grow the extent holding (or ending at) `off` in place: a sequential
    // writer appends to its string instead of copying it.
    std::string &s = base->second;
    const uint64_t need = end - base->first;
    if (need > s.size()) {
      bytes_ += need - s.size();
      s.resize(need);
    }
    std::memcpy(s.data() + (off - base->first), data, len);
  }
  // Absorb the extents the grown one now reaches.
  uint64_t base_end = end_of(*base);
  auto next = std::next(base);
  while (next != map_.end() && next->first <= base_end) {
    const uint64_t next_end = end_of(*next);
    if (next_end > base_end) {
      const size_t keep_from = base_end - next->first;
      base->second.append(next->second, keep_from, std::string::npos);
      bytes_ += next->second.size() - keep_from;
      base_end = next_end;
    }
    bytes_ -= next->second.size();
    next = map_.erase(next);
  }
}

void ExtentMap::erase(uint64_t off, uint64_t len) {
  if (len == 0) return;
  const uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
  auto it = map_.upper_bound(off);
  if (it != map_.begin() && end_of(*std::prev(it)) > off) --it;
  while (it != map_.end() && it->first < end) {
    const uint64_t e_start = it->first, e_end = end_of(*it);
    std::string tail;
    if (e_end > end) tail = it->second.substr(end - e_start);
    if (e_start < off) {
      bytes_ -= it->second.size() - (off - e_start);
      it->second.resize(off - e_start);
      ++it;
    } else {
      bytes_ -= it->second.size();
      it = map_.erase(it);
    }
    if (!tail.empty()) {
      bytes_ += tail.size();
      map_.emplace_hint(it, end, std::move(tail));
      break;  // the tail lies past `end`: nothing further overlaps
    }
  }
}

void ExtentMap::truncate(uint64_t size) { erase(size, UINT64_MAX - size); }

void ExtentMap::clear() {
  map_.clear();
  bytes_ = 0;
}

void ExtentMap::overlay(uint64_t off, size_t len, char *out) const {
  const uint64_t end = off + len;
  auto it = map_.upper_bound(off);
  if (it != map_.begin()) --it;
  for (; it != map_.end() && it->first < end; ++it) {
    const uint64_t lo = std::max(off, it->first);
    const uint64_t hi = std::min(end, end_of(*it));
    if (lo < hi) std::memcpy(out + (lo - off), it->second.data() + (lo - it->first), hi - lo);
  }
}

bool ExtentMap::covers(uint64_t off, size_t len) const {
  if (len == 0) return true;
  auto it = map_.upper_bound(off);
  if (it == map_.begin()) return false;
  --it;  // merged extents: one extent must hold the whole range
  return end_of(*it) >= off + len;
}

ExtentMap ExtentMap::slice(uint64_t off, size_t len) const {
  ExtentMap out;
  const uint64_t end = off + len;
  auto it = map_.upper_bound(off);
  if (it != map_.begin()) --it;
  for (; it != map_.end() && it->first < end; ++it) {
    const uint64_t lo = std::max(off, it->first);
    const uint64_t hi = std::min(end, end_of(*it));
    if (lo < hi) out.insert(lo, it->second.data() + (lo - it->first), hi - lo);
  }
  return out;
}

void ExtentMap::shrink_to(size_t max_bytes) {
  while (bytes_ > max_bytes && !map_.empty()) {
    auto first = map_.begin();
    const size_t excess = bytes_ - max_bytes;
    if (first->second.size() <= excess) {
      bytes_ -= first->second.size();
      map_.erase(first);
    } else {
      erase(first->first, excess);  // merged extents can be large: trim its front
    }
  }
}

}  // namespace strata::fuse
