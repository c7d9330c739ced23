// The data path of ImageFile: each request becomes one device request
// (the kernel splits anything larger than max_write / max_read), answered
// from its Done.
#include <fcntl.h>
#include <linux/falloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "image_file.h"

namespace strata::rbd {

namespace {

// Starts one device request through `start` with `done`; a throw from the
// device (it should not) is answered -EIO unless done already ran.
template <class Start>
void run_device_request(const Done &done, Start start) {
  try {
    start(done);
  } catch (...) {
    done(-EIO);
  }
}

}  // namespace

Done ImageFile::answer(fuse_req_t req, std::function<void()> ok) {
  in_flight_.begin();
  // `answered` keeps a device that calls done twice (a bug), or a throw
  // after done ran, from replying twice to one request.
  auto answered = std::make_shared<std::atomic<bool>>(false);
  return [this, req, ok = std::move(ok), answered](int result) {
    if (answered->exchange(true)) return;
    if (result < 0) {
      counters_.errors++;
      fuse_reply_err(req, -result);
    } else {
      ok();
    }
    in_flight_.end();
  };
}

void ImageFile::read(fuse_req_t req, size_t size, off_t off) {
  if (off < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  auto start = static_cast<uint64_t>(off);
  if (size == 0 || start >= size_) {
    fuse_reply_buf(req, nullptr, 0);  // at or past the end: end of file
    return;
  }
  uint64_t len = std::min<uint64_t>(size, size_ - start);  // a short read at the end
  std::shared_ptr<char[]> buf(new (std::nothrow) char[len]);
  if (!buf) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  counters_.reads++;
  Done done = answer(req, [this, req, buf, len] {
    counters_.bytes_read += len;
    fuse_reply_buf(req, buf.get(), len);
  });
  run_device_request(done, [&](const Done &d) { device_->read(start, len, buf.get(), d); });
}

void ImageFile::write(fuse_req_t req, const char *data, size_t size, off_t off,
                      fuse_file_info *fi) {
  if (read_only_) {
    fuse_reply_err(req, EROFS);
    return;
  }
  if (off < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  auto start = static_cast<uint64_t>(off);
  if (size == 0) {
    fuse_reply_write(req, 0);
    return;
  }
  if (start >= size_) {
    fuse_reply_err(req, ENOSPC);  // a block device does not grow
    return;
  }
  uint64_t len = std::min<uint64_t>(size, size_ - start);  // a short write at the end
  // `data` is libfuse's buffer, reused once this returns: the device gets
  // a copy, so that the worker need not wait for it.
  std::shared_ptr<char[]> copy(new (std::nothrow) char[len]);
  if (!copy) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  std::memcpy(copy.get(), data, len);
  handle(fi).wrote = true;
  bool fua = (fi->flags & O_DSYNC) != 0;  // O_SYNC includes O_DSYNC's bit
  counters_.writes++;
  Done done = answer(req, [this, req, copy, len] {
    counters_.bytes_written += len;
    fuse_reply_write(req, len);
  });
  run_device_request(done,
                     [&](const Done &d) { device_->write(start, len, copy.get(), fua, d); });
}

void ImageFile::flush_device(fuse_req_t req) {
  counters_.flushes++;
  Done done = answer(req, [req] { fuse_reply_err(req, 0); });
  run_device_request(done, [&](const Done &d) { device_->flush(d); });
}

void ImageFile::flush(fuse_req_t req, fuse_file_info *fi) {
  // close(2) makes what this handle wrote durable, as losetup -d or dd
  // without conv=fsync would hope; a reader's close costs nothing.
  if (handle(fi).wrote.exchange(false)) {
    flush_device(req);
  } else {
    fuse_reply_err(req, 0);
  }
}

void ImageFile::fsync(fuse_req_t req, fuse_file_info *fi) {
  handle(fi).wrote = false;
  flush_device(req);  // fdatasync too: the device has no metadata to skip
}

void ImageFile::fallocate(fuse_req_t req, int mode, off_t off, off_t len) {
  if (off < 0 || len <= 0 || len > std::numeric_limits<off_t>::max() - off) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  const bool keep_size = (mode & FALLOC_FL_KEEP_SIZE) != 0;
  const int op = mode & ~FALLOC_FL_KEEP_SIZE;
  if ((op != 0 && op != FALLOC_FL_PUNCH_HOLE && op != FALLOC_FL_ZERO_RANGE) ||
      (op == FALLOC_FL_PUNCH_HOLE && !keep_size)) {
    fuse_reply_err(req, EOPNOTSUPP);  // collapse, insert, unshare: not on a device
    return;
  }
  auto start = static_cast<uint64_t>(off), end = start + static_cast<uint64_t>(len);
  if (end > size_ && !keep_size) {
    fuse_reply_err(req, EFBIG);  // the file would have to grow
    return;
  }
  if (op != 0 && read_only_) {
    fuse_reply_err(req, EROFS);
    return;
  }
  end = std::min(end, size_);
  if (op == 0 || start >= end) {
    fuse_reply_err(req, 0);  // every byte of a device is already there
    return;
  }
  Done done = answer(req, [req] { fuse_reply_err(req, 0); });
  if (op == FALLOC_FL_PUNCH_HOLE) {
    counters_.discards++;
    run_device_request(done,
                       [&](const Done &d) { device_->discard(start, end - start, false, d); });
  } else {
    // ZERO_RANGE keeps the range allocated, so no unmapping.
    counters_.writes++;
    run_device_request(done, [&](const Done &d) {
      device_->write_zeroes(start, end - start, false, false, d);
    });
  }
}

}  // namespace strata::rbd
