#include "readahead.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace strata::rbd {

namespace {
constexpr uint32_t kMaxBlock = 128u << 10;
constexpr uint64_t kMinWindow = 256u << 10;
}  // namespace

Readahead::Readahead(uint64_t max_bytes, uint32_t object_size, uint64_t image_size)
    : max_bytes_(max_bytes),
      object_size_(object_size),
      block_(std::min(object_size, kMaxBlock)),
      image_size_(image_size) {}

std::pair<uint64_t, uint64_t> Readahead::on_read(uint64_t off, uint64_t len) {
  if (!enabled()) return {0, 0};
  std::lock_guard lk(m_);
  if (off == last_end_) {
    ++run_;
  } else {
    run_ = 0;
    window_ = 0;
    fetched_to_ = 0;
  }
  last_end_ = off + len;
  // Two reads in a row that each started where the one before ended.
  if (run_ < 2) return {0, 0};
  const uint64_t start = std::max(fetched_to_, last_end_);
  // Keep at least half a window ahead of the reader.
  if (window_ && start > last_end_ + window_ / 2) return {0, 0};
  window_ = window_ ? std::min(window_ * 2, max_bytes_)
                    : std::min(std::max<uint64_t>(4 * len, kMinWindow), max_bytes_);
  const uint64_t end = std::min(last_end_ + window_, image_size_);
  if (end <= start) return {0, 0};
  fetched_to_ = end;
  return {start, end - start};
}

Readahead::Serve Readahead::serve(uint64_t objno, uint64_t off, uint64_t len, char *dst,
                                  std::function<void(const Block *)> waiter) {
  std::lock_guard lk(m_);
  const uint64_t boff = off / block_ * block_;
  auto it = blocks_.find({objno, boff});
  if (it == blocks_.end()) return Serve::kMiss;
  const BlockPtr &b = it->second;
  if (b->stale || off + len > b->off + b->len) return Serve::kMiss;
  if (!b->fetched) {
    b->waiters.push_back(std::move(waiter));
    return Serve::kWaiting;
  }
  std::memcpy(dst, b->data.data() + (off - b->off), len);
  // A block read to its end has served its sequential reader.
  if (off + len == b->off + b->len) {
    bytes_ -= b->len;
    blocks_.erase(it);
  }
  return Serve::kHit;
}

std::vector<Readahead::BlockPtr> Readahead::begin_prefetch(uint64_t off, uint64_t len) {
  std::vector<BlockPtr> out;
  if (!enabled()) return out;
  std::lock_guard lk(m_);
  const uint64_t end = std::min(off + len, image_size_);
  for (uint64_t pos = off / block_ * block_; pos < end; pos += block_) {
    const uint64_t objno = pos / object_size_, boff = pos % object_size_;
    const uint64_t blen = std::min<uint64_t>(block_, image_size_ - pos);
    if (blocks_.count({objno, boff})) continue;
    auto w = writers_.find(objno);
    if (w != writers_.end() && w->second > 0) continue;
    if (bytes_ + blen > 2 * max_bytes_) evict_locked(blen);
    if (bytes_ + blen > 2 * max_bytes_) break;  // everything left is in flight
    auto b = std::make_shared<Block>();
    b->objno = objno;
    b->off = boff;
    b->len = blen;
    b->data.resize(blen);
    b->age = next_age_++;
    blocks_[{objno, boff}] = b;
    bytes_ += blen;
    out.push_back(std::move(b));
  }
  return out;
}

void Readahead::evict_locked(uint64_t need) {
  // Oldest fetched blocks first; blocks in flight stay (their waiters).
  std::vector<std::pair<uint64_t, Key>> done;
  for (const auto &[k, b] : blocks_)
    if (b->fetched) done.emplace_back(b->age, k);
  std::sort(done.begin(), done.end());
  for (const auto &[age, k] : done) {
    if (bytes_ + need <= 2 * max_bytes_) break;
    bytes_ -= blocks_[k]->len;
    blocks_.erase(k);
  }
}

void Readahead::tell_waiters(const BlockPtr &b, const Block *result) {
  for (auto &w : b->waiters) w(result);
  b->waiters.clear();
}

void Readahead::fetched(const BlockPtr &b, int64_t rc) {
  bool good = false;
  {
    std::lock_guard lk(m_);
    if (rc == -ENOENT) rc = 0;
    if (rc >= 0) {
      const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(rc), b->len);
      std::memset(b->data.data() + n, 0, b->len - n);
      b->fetched = true;
      good = !b->stale;
    }
    if (!good) {
      auto it = blocks_.find({b->objno, b->off});
      if (it != blocks_.end() && it->second == b) {
        bytes_ -= b->len;
        blocks_.erase(it);
      }
    }
  }
  // The waiters copy out of the block; it stays alive through b.
  tell_waiters(b, good ? b.get() : nullptr);
}

void Readahead::drop_object_locked(uint64_t objno, std::vector<BlockPtr> *orphans) {
  auto it = blocks_.lower_bound({objno, 0});
  while (it != blocks_.end() && it->first.first == objno) {
    it->second->stale = true;
    if (!it->second->fetched) orphans->push_back(it->second);
    bytes_ -= it->second->len;
    it = blocks_.erase(it);
  }
}

void Readahead::begin_write(uint64_t objno) {
  if (!enabled()) return;
  // Blocks in flight complete later, stale, and tell their waiters then.
  std::vector<BlockPtr> orphans;
  std::lock_guard lk(m_);
  ++writers_[objno];
  drop_object_locked(objno, &orphans);
}

void Readahead::end_write(uint64_t objno) {
  if (!enabled()) return;
  std::vector<BlockPtr> orphans;
  std::lock_guard lk(m_);
  auto w = writers_.find(objno);
  if (w != writers_.end() && --w->second == 0) writers_.erase(w);
  drop_object_locked(objno, &orphans);
}

}  // namespace strata::rbd
