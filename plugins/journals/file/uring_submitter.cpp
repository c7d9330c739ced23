#include "uring_submitter.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "strata/cpp/plugin_support.hpp"

namespace strata::journal {

using sdk::make_error;

std::unique_ptr<UringSubmitter> UringSubmitter::create(unsigned entries, std::string *why) {
  std::unique_ptr<UringSubmitter> s(new UringSubmitter(entries));
  int rc = io_uring_queue_init(entries, &s->ring_, 0);
  if (rc < 0) {
    if (why) *why = std::string("io_uring_queue_init: ") + strerror(-rc);
    s.release();  // the ring was not set up: nothing to tear down
    return nullptr;
  }
  return s;
}

UringSubmitter::~UringSubmitter() { io_uring_queue_exit(&ring_); }

void UringSubmitter::wait_for(size_t count, std::span<int> results, const std::string &name) {
  for (size_t done = 0; done < count;) {
    io_uring_cqe *cqe = nullptr;
    int rc = io_uring_wait_cqe(&ring_, &cqe);
    if (rc == -EINTR) continue;
    if (rc < 0) throw make_error(rc, "%s: waiting for io_uring completions: %s", name.c_str(),
                                 strerror(-rc));
    size_t index = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
    if (index < results.size()) results[index] = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    ++done;
  }
}

void UringSubmitter::write_durable(int fd, std::span<const WriteRun> runs, SyncMode mode,
                                   const std::string &name) {
  // One slot per write plus the flush; more runs than the ring holds are
  // submitted in rounds (a batch has at most three runs in practice).
  const size_t per_round = entries_ - 1;
  for (size_t first = 0; first < runs.size() || first == 0; first += per_round) {
    std::span<const WriteRun> round = runs.subspan(first, std::min(per_round, runs.size() - first));
    const bool last_round = first + round.size() >= runs.size();
    const bool with_flush = last_round && mode == SyncMode::kFdatasync;
    std::vector<int> results(round.size() + 1, 0);

    for (size_t i = 0; i < round.size(); ++i) {
      io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
      io_uring_prep_write(sqe, fd, round[i].data, static_cast<unsigned>(round[i].len),
                          round[i].offset);
      if (mode == SyncMode::kDsync) sqe->rw_flags = RWF_DSYNC;
      io_uring_sqe_set_data64(sqe, i);
    }
    if (with_flush) {
      // DRAIN: the flush starts only after every write before it completed,
      // while the writes themselves may run in parallel.
      io_uring_sqe *sqe = io_uring_get_sqe(&ring_);
      io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
      sqe->flags |= IOSQE_IO_DRAIN;
      io_uring_sqe_set_data64(sqe, round.size());
    }
    const size_t submitted = round.size() + (with_flush ? 1 : 0);
    int rc;
    do {
      rc = io_uring_submit(&ring_);
    } while (rc == -EINTR);
    if (rc < 0 || static_cast<size_t>(rc) != submitted)
      throw make_error(rc < 0 ? rc : -EIO, "%s: io_uring_submit of %zu requests returned %d",
                       name.c_str(), submitted, rc);
    wait_for(submitted, results, name);

    bool redo_flush = false;
    for (size_t i = 0; i < round.size(); ++i) {
      int res = results[i];
      if (res < 0)
        throw make_error(res, "%s: write of %zu bytes at offset %llu failed: %s", name.c_str(),
                         round[i].len, static_cast<unsigned long long>(round[i].offset),
                         strerror(-res));
      // A short write: finish it synchronously, then flush again.
      size_t done = static_cast<size_t>(res);
      while (done < round[i].len) {
        ssize_t n = ::pwrite(fd, static_cast<const char *>(round[i].data) + done,
                             round[i].len - done, static_cast<off_t>(round[i].offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
          throw make_error(n < 0 ? errno : EIO, "%s: write at offset %llu failed: %s",
                           name.c_str(), static_cast<unsigned long long>(round[i].offset + done),
                           n < 0 ? strerror(errno) : "no progress");
        done += static_cast<size_t>(n);
        redo_flush = true;
      }
    }
    if (with_flush && results[round.size()] < 0)
      throw make_error(results[round.size()], "%s: fdatasync failed: %s", name.c_str(),
                       strerror(-results[round.size()]));
    if (redo_flush && ::fdatasync(fd) != 0)
      throw make_error(errno, "%s: fdatasync failed: %s", name.c_str(), strerror(errno));
    if (runs.empty()) break;
  }
}

}  // namespace strata::journal
