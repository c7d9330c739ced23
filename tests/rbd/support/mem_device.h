// An in-memory BlockDevice for the rbd frontend's server tests (nbd/,
// map/): sparse (64 KiB chunks, a chunk never written is a hole), thread
// safe, and it completes every request before returning unless given
// `async_threads`, in which case requests complete on those threads in no
// particular order (as the real image does on the client's threads).
#pragma once

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "block_device.h"

namespace rbdtest {

class MemDevice : public strata::rbd::BlockDevice {
 public:
  static constexpr uint64_t kChunk = 64 * 1024;

  explicit MemDevice(uint64_t size, bool read_only = false, int async_threads = 0)
      : size_(size), read_only_(read_only) {
    for (int i = 0; i < async_threads; ++i) threads_.emplace_back([this] { run(); });
  }
  ~MemDevice() override {
    {
      std::lock_guard<std::mutex> l(qmu_);
      stopping_ = true;
    }
    qcv_.notify_all();
    for (auto &t : threads_) t.join();
  }

  uint64_t size() const override { return size_; }
  uint32_t min_block() const override { return 1; }
  uint32_t preferred_block() const override { return 4096; }
  bool read_only() const override { return read_only_; }
  std::string describe() const override { return "mem"; }

  void read(uint64_t off, uint64_t len, char *out, strata::rbd::Done done) override {
    submit([=, this] { return do_read(off, len, out); }, std::move(done));
  }
  void write(uint64_t off, uint64_t len, const char *data, bool, strata::rbd::Done done) override {
    submit([=, this] { return do_write(off, len, data); }, std::move(done));
  }
  void discard(uint64_t off, uint64_t len, bool, strata::rbd::Done done) override {
    submit([=, this] { return do_zero(off, len, true); }, std::move(done));
  }
  void write_zeroes(uint64_t off, uint64_t len, bool may_unmap, bool,
                    strata::rbd::Done done) override {
    submit([=, this] { return do_zero(off, len, may_unmap); }, std::move(done));
  }
  void flush(strata::rbd::Done done) override {
    flushes_++;
    submit([] { return 0; }, std::move(done));
  }
  void cache(uint64_t, uint64_t, strata::rbd::Done done) override {
    submit([] { return 0; }, std::move(done));
  }
  int extents(uint64_t off, uint64_t len, std::vector<strata::rbd::Extent> *out) override {
    std::lock_guard<std::mutex> l(mu_);
    out->clear();
    uint64_t end = off + len;
    while (off < end) {
      uint64_t c = off / kChunk, stop = std::min(end, (c + 1) * kChunk);
      bool hole = chunks_.find(c) == chunks_.end();
      if (!out->empty() && out->back().hole == hole) {
        out->back().length += stop - off;
      } else {
        out->push_back({off, stop - off, hole, hole});
      }
      off = stop;
    }
    return 0;
  }

  uint64_t flushes() const { return flushes_; }
  size_t allocated_chunks() const {
    std::lock_guard<std::mutex> l(mu_);
    return chunks_.size();
  }

 private:
  int check(uint64_t off, uint64_t len) const {
    return len == 0 || off > size_ || len > size_ - off ? -EINVAL : 0;
  }
  int do_read(uint64_t off, uint64_t len, char *out) {
    if (int rc = check(off, len)) return rc;
    std::lock_guard<std::mutex> l(mu_);
    for (uint64_t done = 0; done < len;) {
      uint64_t p = off + done, c = p / kChunk, in = p % kChunk, n = std::min(len - done, kChunk - in);
      auto it = chunks_.find(c);
      if (it == chunks_.end()) {
        std::memset(out + done, 0, n);
      } else {
        std::memcpy(out + done, it->second.data() + in, n);
      }
      done += n;
    }
    return 0;
  }
  int do_write(uint64_t off, uint64_t len, const char *data) {
    if (int rc = check(off, len)) return rc;
    if (read_only_) return -EROFS;
    std::lock_guard<std::mutex> l(mu_);
    for (uint64_t done = 0; done < len;) {
      uint64_t p = off + done, c = p / kChunk, in = p % kChunk, n = std::min(len - done, kChunk - in);
      auto &chunk = chunks_[c];
      if (chunk.empty()) chunk.assign(kChunk, 0);
      std::memcpy(chunk.data() + in, data + done, n);
      done += n;
    }
    return 0;
  }
  int do_zero(uint64_t off, uint64_t len, bool unmap) {
    if (int rc = check(off, len)) return rc;
    if (read_only_) return -EROFS;
    std::lock_guard<std::mutex> l(mu_);
    for (uint64_t done = 0; done < len;) {
      uint64_t p = off + done, c = p / kChunk, in = p % kChunk, n = std::min(len - done, kChunk - in);
      auto it = chunks_.find(c);
      if (it != chunks_.end()) {
        if (unmap && in == 0 && n == kChunk) {
          chunks_.erase(it);
        } else {
          std::memset(it->second.data() + in, 0, n);
        }
      }
      done += n;
    }
    return 0;
  }

  template <class F>
  void submit(F work, strata::rbd::Done done) {
    if (threads_.empty()) {
      done(work());
      return;
    }
    std::lock_guard<std::mutex> l(qmu_);
    queue_.push_back([work, done = std::move(done)] { done(work()); });
    qcv_.notify_one();
  }
  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> l(qmu_);
        qcv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
    }
  }

  const uint64_t size_;
  const bool read_only_;
  mutable std::mutex mu_;
  std::map<uint64_t, std::vector<char>> chunks_;
  std::atomic<uint64_t> flushes_{0};
  std::mutex qmu_;
  std::condition_variable qcv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rbdtest
