#include "cli/image_cli_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include "client/client_api_table.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::cli {

namespace {

// Buffers for the requests in flight: a request takes a free one and
// gives it back when it completed (in any order); keeps the first error.
class BufferPool {
 public:
  BufferPool(int n, size_t size) : bufs_(size_t(n), std::vector<char>(size)) {
    for (int i = 0; i < n; ++i) free_.push_back(i);
  }
  int take() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !free_.empty(); });
    int i = free_.back();
    free_.pop_back();
    return i;
  }
  char *data(int i) { return bufs_[size_t(i)].data(); }
  void give_back(int i, int rc) {
    std::lock_guard<std::mutex> l(mu_);
    free_.push_back(i);
    if (rc < 0 && first_error_ == 0) first_error_ = rc;
    cv_.notify_all();
  }
  // Waits until every buffer is back; the first error.
  int drain() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return free_.size() == bufs_.size(); });
    return first_error_;
  }
  int error() {
    std::lock_guard<std::mutex> l(mu_);
    return first_error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<char>> bufs_;
  std::vector<int> free_;
  int first_error_ = 0;
};

bool all_zero(const char *p, size_t n) {
  static const char zeros[4096] = {};
  for (size_t off = 0; off < n; off += sizeof zeros)
    if (std::memcmp(p + off, zeros, std::min(sizeof zeros, n - off)) != 0) return false;
  return true;
}

constexpr uint64_t kChunk = 1u << 20;  // bytes per request
constexpr int kWindow = 8;             // requests in flight

}  // namespace

Result<std::unique_ptr<rbd::ImageStore>> image_store(Session &s, const std::string &pool) {
  auto io = s.ioctx(pool);
  if (!io.ok()) return io.status();
  // With the cluster: a clone's parents in other pools are reachable.
  return std::make_unique<rbd::ImageStore>(client::client_api_table(), *io, pool, s.cluster());
}

Result<uint64_t> copy_image_to_fd(rbd::BlockDevice &dev, int fd, const std::string &what) {
  const uint64_t size = dev.size();
  struct stat st {};
  bool sparse = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  // Reads run ahead in a window; writes to fd go out in order.
  struct Slot {
    std::vector<char> buf;
    uint64_t off = 0, len = 0;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    int rc = 0;
  };
  std::vector<Slot> slots(kWindow);
  uint64_t next_read = 0;
  auto start_read = [&](Slot &s) {
    s.off = next_read;
    s.len = std::min(kChunk, size - next_read);
    s.buf.resize(s.len);
    s.done = false;
    next_read += s.len;
    dev.read(s.off, s.len, s.buf.data(), [&s](int rc) {
      std::lock_guard<std::mutex> l(s.mu);
      s.rc = rc;
      s.done = true;
      s.cv.notify_all();
    });
  };
  size_t issued = 0, consumed = 0;
  for (; issued < slots.size() && next_read < size; ++issued) start_read(slots[issued]);
  uint64_t written = 0;
  while (consumed < issued) {
    Slot &s = slots[consumed % slots.size()];
    {
      std::unique_lock<std::mutex> l(s.mu);
      s.cv.wait(l, [&] { return s.done; });
    }
    if (s.rc < 0) {
      // Wait for the reads still out before the slots go away.
      for (size_t i = consumed + 1; i < issued; ++i) {
        Slot &o = slots[i % slots.size()];
        std::unique_lock<std::mutex> l(o.mu);
        o.cv.wait(l, [&] { return o.done; });
      }
      return Status::Error(-s.rc, what + ": read at offset " + std::to_string(s.off) + " failed");
    }
    if (sparse && all_zero(s.buf.data(), s.len)) {
      if (::lseek(fd, off_t(s.len), SEEK_CUR) < 0)
        return Status::Error(errno, what + ": seek in the output failed");
    } else {
      for (uint64_t done = 0; done < s.len;) {
        ssize_t n = ::write(fd, s.buf.data() + done, s.len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          int e = n < 0 ? errno : EIO;
          for (size_t i = consumed + 1; i < issued; ++i) {
            Slot &o = slots[i % slots.size()];
            std::unique_lock<std::mutex> l(o.mu);
            o.cv.wait(l, [&] { return o.done; });
          }
          return Status::Error(e, what + ": writing the output failed");
        }
        done += uint64_t(n);
      }
    }
    written += s.len;
    ++consumed;
    if (next_read < size) start_read(slots[(issued++) % slots.size()]);
  }
  if (sparse && ::ftruncate(fd, off_t(size)) != 0)
    return Status::Error(errno, what + ": setting the output's size failed");
  return written;
}

Result<uint64_t> copy_fd_to_image(int fd, uint64_t size, rbd::BlockDevice &dev,
                                  const std::string &what) {
  BufferPool pool(kWindow, kChunk);
  uint64_t off = 0;
  while (off < size && pool.error() == 0) {
    uint64_t len = std::min(kChunk, size - off);
    int b = pool.take();
    char *buf = pool.data(b);
    for (uint64_t got = 0; got < len;) {
      ssize_t n = ::read(fd, buf + got, len - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int e = n < 0 ? errno : EIO;
        pool.give_back(b, 0);
        pool.drain();
        return Status::Error(e, what + ": the input ended or failed at offset " +
                                    std::to_string(off + got));
      }
      got += uint64_t(n);
    }
    if (all_zero(buf, len)) {
      pool.give_back(b, 0);
    } else {
      dev.write(off, len, buf, false, [&pool, b](int rc) { pool.give_back(b, rc); });
    }
    off += len;
  }
  int rc = pool.drain();
  if (rc == 0) {
    int b = pool.take();
    dev.flush([&pool, b](int r) { pool.give_back(b, r); });
    rc = pool.drain();
  }
  if (rc < 0) return Status::Error(-rc, what + ": writing the image failed");
  return size;
}

}  // namespace strata::cli
