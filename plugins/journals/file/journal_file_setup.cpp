#include "journal_file_setup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "journal_log/aligned_buffer.h"
#include "journal_log/journal_path.h"
#include "journal_log/superblock_io.h"

namespace strata::journal {

using sdk::make_error;

namespace {

bool is_block_device(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
}

// Allocates `size` bytes for the file at `path` and writes zeros over them.
void preallocate_zeroed(const std::string &path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600);
  if (fd < 0 && errno == EINVAL)  // no O_DIRECT on this file system
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw make_error(errno, "cannot create %s: %s", path.c_str(), strerror(errno));
  auto fail = [&](int e, const char *what) {
    ::close(fd);
    return make_error(e, "%s %s (%llu bytes): %s", what, path.c_str(),
                      static_cast<unsigned long long>(size), strerror(e));
  };
  // fallocate first for contiguous extents; it leaves them "unwritten", and
  // the zeros turn them into written ones.
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) throw fail(rc, "cannot allocate");
  constexpr size_t kChunk = size_t{1} << 20;
  AlignedBuffer zeros(kChunk, 4096);
  for (uint64_t off = 0; off < size;) {
    size_t n = size - off < kChunk ? static_cast<size_t>(size - off) : kChunk;
    ssize_t w = ::pwrite(fd, zeros.data(), n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw fail(w < 0 ? errno : EIO, "cannot zero-fill");
    off += static_cast<uint64_t>(w);
  }
  if (::fsync(fd) != 0) throw fail(errno, "cannot sync");
  ::close(fd);
}

}  // namespace

void create_file_journal(const std::string &path, uint32_t block_size, uint64_t capacity,
                         const JournalOwner &owner, const FileMediaOptions &io,
                         const sdk::Logger &log) {
  if (is_block_device(path)) {
    std::unique_ptr<FileMedia> media = FileMedia::open(path, io);
    uint64_t whole = capacity_for(block_size, media->size());
    if (capacity == 0 || capacity > whole) {
      if (capacity > whole)
        log.log(STRATA_LOG_WARN,
                "journal on block device %s: asked for %llu bytes, the device holds %llu; "
                "using the whole device",
                path.c_str(), static_cast<unsigned long long>(capacity),
                static_cast<unsigned long long>(whole));
      capacity = whole;
    }
    format_journal(*media, block_size, capacity, owner);
    return;
  }

  if (capacity / block_size < 2)
    throw make_error(EINVAL, "journal %s: capacity %llu is below two blocks of %u bytes",
                     path.c_str(), static_cast<unsigned long long>(capacity), block_size);
  create_by_rename(path, [&](const std::string &tmp) {
    preallocate_zeroed(tmp, medium_size_for(block_size, capacity));
    std::unique_ptr<FileMedia> media = FileMedia::open(tmp, io);
    format_journal(*media, block_size, capacity, owner);
  });
}

void destroy_file_journal(const std::string &path, const FileMediaOptions &io) {
  if (!is_block_device(path)) {
    ::unlink(creating_path(path).c_str());
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw make_error(errno, "cannot remove journal %s: %s", path.c_str(), strerror(errno));
    return;
  }
  std::unique_ptr<FileMedia> media = FileMedia::open(path, io);
  uint32_t bs;
  try {
    bs = load_superblock(*media).block_size;
  } catch (const sdk::Error &) {
    return;  // not a journal (any more)
  }
  AlignedBuffer zeros(uint64_t{kSuperblockCopies} * bs, bs);
  WriteRun run{0, zeros.data(), zeros.size()};
  media->write_durable({&run, 1});
}

}  // namespace strata::journal
