// A journal medium that is a regular file or a block device, written with
// O_DIRECT (when the file system allows it) through io_uring, or with
// pwrite + fdatasync when io_uring is unavailable or switched off.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "journal_log/media.h"
#include "uring_submitter.h"

namespace strata::journal {

struct FileMediaOptions {
  bool direct_io = true;  // O_DIRECT; falls back to buffered I/O when refused
  bool io_uring = true;   // falls back to pwrite when the kernel refuses
  SyncMode sync = SyncMode::kFdatasync;
};

class FileMedia : public Media {
 public:
  // Opens an existing file or block device. Throws sdk::Error.
  static std::unique_ptr<FileMedia> open(const std::string &path, const FileMediaOptions &opts);
  ~FileMedia() override;

  uint64_t size() const override { return size_; }
  uint32_t alignment() const override { return alignment_; }
  const std::string &name() const override { return path_; }
  void read(uint64_t offset, void *buf, size_t len) override;
  void write(uint64_t offset, const void *buf, size_t len) override;
  void flush() override;
  uint64_t next_data(uint64_t offset) const override;
  void write_durable(std::span<const WriteRun> runs) override;

  bool is_block_device() const { return block_device_; }
  bool direct_io() const { return direct_; }
  bool uses_io_uring() const { return uring_ != nullptr; }
  // e.g. "io_uring, O_DIRECT, fdatasync"; plus why a preferred mode is off.
  std::string describe_io() const;

 private:
  FileMedia() = default;

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint32_t alignment_ = 1;
  bool block_device_ = false;
  bool direct_ = false;
  SyncMode sync_ = SyncMode::kFdatasync;
  std::unique_ptr<UringSubmitter> uring_;
  std::string fallback_note_;  // why O_DIRECT or io_uring is not in use
};

}  // namespace strata::journal
