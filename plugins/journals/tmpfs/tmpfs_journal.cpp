// Journal plugin `tmpfs`: the shared circular log (journal_log) in a file that
// is mapped into memory, normally under /dev/shm. Appends are memcpy; the
// content survives a crash of the process but not of the machine, which the
// VOLATILE capability tells the host.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "journal_log/journal_path.h"
#include "journal_log/log_journal.h"
#include "journal_log/superblock_io.h"
#include "mmap_media.h"
#include "strata/cpp/journal.hpp"

namespace strata::journal {
namespace {

using sdk::make_error;

const strata_option_spec kOptions[] = {
    {kOptJournalSize, STRATA_OPT_INT, "1G", nullptr,
     "bytes of records the journal holds when create is given no capacity (memory: the file "
     "is preallocated)"},
    {kOptBlockSize, STRATA_OPT_INT, "4096", nullptr,
     "record alignment in bytes, a power of two in [512, 1M]; fixed at create"},
    {kOptMaxBatchBytes, STRATA_OPT_INT, "4M", nullptr,
     "most bytes one group-commit write carries"},
    {kOptTrimPersistMs, STRATA_OPT_INT, "1000", nullptr,
     "how often at most an idle journal records its trim point"},
};

bool on_tmpfs(const std::string &path) {
  std::string dir = path.substr(0, path.find_last_of('/') + 1);
  struct statfs fs;
  return ::statfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

class TmpfsJournal : public LogJournal {
 public:
  using LogJournal::LogJournal;

  static void create(const sdk::OpenArgs &args, uint64_t capacity) {
    const std::string path = resolve_journal_path(args.path());
    const uint32_t bs = block_size_from(args);
    if (capacity == 0) {
      long long size = args.option_int(kOptJournalSize, 1ll << 30);
      if (size <= 0) throw make_error(EINVAL, "%s must be positive", kOptJournalSize);
      capacity = static_cast<uint64_t>(size);
    }
    const uint64_t medium_size = medium_size_for(bs, capacity);

    create_by_rename(path, [&](const std::string &tmp) {
      int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) throw make_error(errno, "cannot create %s: %s", tmp.c_str(), strerror(errno));
      // Reserve the memory now: a write into a hole of a full tmpfs through
      // the mapping would kill the process with SIGBUS instead of failing.
      int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(medium_size));
      ::close(fd);
      if (rc != 0)
        throw make_error(rc, "cannot allocate %llu bytes for journal %s: %s",
                         static_cast<unsigned long long>(medium_size), tmp.c_str(), strerror(rc));
      std::unique_ptr<MmapMedia> media = MmapMedia::open(tmp);
      format_journal(*media, bs, capacity, owner_from(args));
    });
  }

  static std::unique_ptr<TmpfsJournal> open(const sdk::OpenArgs &args) {
    const std::string path = resolve_journal_path(args.path());
    auto j = std::make_unique<TmpfsJournal>(MmapMedia::open(path), args,
                                            STRATA_JOURNAL_CAP_VOLATILE);
    sdk::Logger(args.host()).log(
        on_tmpfs(path) ? STRATA_LOG_INFO : STRATA_LOG_WARN,
        "tmpfs journal %s: %llu bytes of records, memory-mapped%s; it survives a process crash, "
        "not a reboot",
        path.c_str(), static_cast<unsigned long long>(j->stat().capacity_bytes),
        on_tmpfs(path) ? "" : " (the file is not on tmpfs)");
    return j;
  }

  static void destroy(const sdk::OpenArgs &args) {
    const std::string path = resolve_journal_path(args.path());
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw make_error(errno, "cannot remove journal %s: %s", path.c_str(), strerror(errno));
  }
};

}  // namespace
}  // namespace strata::journal

STRATA_JOURNAL_PLUGIN(strata::journal::TmpfsJournal, "tmpfs", "0.1.0",
                      "journal in a memory-mapped file on tmpfs (volatile: lost on reboot)",
                      strata::journal::kOptions)
