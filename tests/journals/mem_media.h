// An in-memory journal medium for tests of the shared log: every write lands
// at once (so a copy of the bytes at any moment is a possible crash state),
// and the test can hold writes in flight, fail them, count them, and damage
// bytes. The bytes live in a MemDevice shared between the Media handed to a
// CircularLog and the test, so they outlive the log.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "journal_log/media.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::journal_test {

class MemDevice {
 public:
  explicit MemDevice(uint64_t size) : bytes_(size, 0) {}
  explicit MemDevice(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}

  // A crash copy that also remembers which part was ever written, so that
  // a MemMedia made with holes = true can report the rest as a hole.
  std::shared_ptr<MemDevice> crash_copy() const {
    std::lock_guard lk(mu_);
    auto copy = std::make_shared<MemDevice>(bytes_);
    copy->written_end_ = written_end_;
    return copy;
  }
  uint64_t written_end() const {
    std::lock_guard lk(mu_);
    return written_end_;
  }

  // A copy of the bytes as they are now: what a crash would leave.
  std::vector<uint8_t> snapshot() const {
    std::lock_guard lk(mu_);
    return bytes_;
  }
  void damage(uint64_t offset, size_t len, uint8_t value = 0x5a) {
    std::lock_guard lk(mu_);
    std::memset(bytes_.data() + offset, value, len);
  }
  std::vector<uint8_t> read(uint64_t offset, size_t len) const {
    std::lock_guard lk(mu_);
    return {bytes_.begin() + offset, bytes_.begin() + offset + len};
  }

  // While held, write_durable waits (the batch stays in flight).
  void hold_writes(bool hold) {
    {
      std::lock_guard lk(mu_);
      hold_ = hold;
    }
    cv_.notify_all();
  }
  // Blocks until a write is waiting at the hold.
  void wait_until_write_held() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return held_writers_ > 0; });
  }
  void fail_writes(bool fail) {
    std::lock_guard lk(mu_);
    fail_ = fail;
  }
  uint64_t bytes_read() const {
    std::lock_guard lk(mu_);
    return bytes_read_;
  }
  uint64_t size() const { return bytes_.size(); }

  void write_durable(std::span<const journal::WriteRun> runs) {
    std::unique_lock lk(mu_);
    ++held_writers_;
    cv_.notify_all();
    cv_.wait(lk, [&] { return !hold_; });
    --held_writers_;
    if (fail_) throw sdk::Error(-EIO, "mem device: injected write failure");
    for (const journal::WriteRun &r : runs) {
      std::memcpy(bytes_.data() + r.offset, r.data, r.len);
      written_end_ = std::max<uint64_t>(written_end_, r.offset + r.len);
    }
  }
  void read_into(uint64_t offset, void *buf, size_t len) {
    std::lock_guard lk(mu_);
    bytes_read_ += len;
    std::memcpy(buf, bytes_.data() + offset, len);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t> bytes_;  // GUARDED_BY(mu_) (its size is fixed)
  bool hold_ = false;
  bool fail_ = false;
  int held_writers_ = 0;
  uint64_t bytes_read_ = 0;
  uint64_t written_end_ = 0;  // everything past it was never written: a hole
};

class MemMedia : public journal::Media {
 public:
  // holes: report what was never written as a hole (Media::next_data), as
  // SEEK_DATA does on a sparse file.
  explicit MemMedia(std::shared_ptr<MemDevice> dev, bool holes = false)
      : dev_(std::move(dev)), holes_(holes) {}
  uint64_t size() const override { return dev_->size(); }
  uint32_t alignment() const override { return 1; }
  const std::string &name() const override { return name_; }
  void read(uint64_t offset, void *buf, size_t len) override { dev_->read_into(offset, buf, len); }
  void write(uint64_t offset, const void *buf, size_t len) override {
    journal::WriteRun run{offset, buf, len};
    dev_->write_durable({&run, 1});
  }
  void flush() override {}
  void write_durable(std::span<const journal::WriteRun> runs) override {
    dev_->write_durable(runs);
  }
  uint64_t next_data(uint64_t offset) const override {
    return !holes_ || offset < dev_->written_end() ? offset : dev_->size();
  }

 private:
  std::shared_ptr<MemDevice> dev_;
  bool holes_;
  std::string name_ = "memory";
};

}  // namespace strata::journal_test
