// A journal medium that is a file mapped into memory (on tmpfs: RAM). Writes
// are memcpy and need no flush: once copied, the bytes are in the page cache,
// which outlives the process (not the machine).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "journal_log/media.h"

namespace strata::journal {

class MmapMedia : public Media {
 public:
  // Maps the whole existing file at `path` read-write. Throws sdk::Error.
  static std::unique_ptr<MmapMedia> open(const std::string &path);
  ~MmapMedia() override;

  uint64_t size() const override { return size_; }
  uint32_t alignment() const override { return 1; }
  const std::string &name() const override { return path_; }
  void read(uint64_t offset, void *buf, size_t len) override;
  void write(uint64_t offset, const void *buf, size_t len) override;
  void flush() override {}
  uint64_t next_data(uint64_t offset) const override;

 private:
  MmapMedia(std::string path, int fd, uint8_t *base, uint64_t size)
      : path_(std::move(path)), fd_(fd), base_(base), size_(size) {}
  void check_range(const char *what, uint64_t offset, size_t len) const;

  std::string path_;
  int fd_;
  uint8_t *base_;
  uint64_t size_;
};

}  // namespace strata::journal
