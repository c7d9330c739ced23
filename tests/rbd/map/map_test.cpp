// The one-file FUSE export's edge cases, on a real mount of a MemDevice
// in this process: what the kernel's callers see at the end of the
// device, for the namespace operations it refuses, for SEEK_DATA /
// SEEK_HOLE, fallocate, flushes, a read-only device, and both ways a map
// ends (unmounted from outside; stop() with the file still open).
#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "file_export.h"
#include "mem_device.h"
#include "strata/cpp/plugin_support.hpp"

using strata::rbd::FileExport;
using strata::rbd::FileExportOptions;

namespace {

constexpr uint64_t kMiB = 1 << 20;

// One map of a fresh MemDevice on a fresh directory under the build tree.
struct Mapped {
  std::shared_ptr<rbdtest::MemDevice> device;
  std::unique_ptr<FileExport> map;
  std::string dir, path;
  std::atomic<int> unmounted_calls{0};

  explicit Mapped(uint64_t size, bool read_only = false, int async_threads = 0) {
    std::string base = MAP_TEST_SCRATCH;
    mkdir(base.c_str(), 0755);  // EEXIST after the first
    std::string templ = base + "/mnt-XXXXXX";
    REQUIRE(mkdtemp(templ.data()) != nullptr);
    dir = templ;
    path = dir + "/disk";
    device = std::make_shared<rbdtest::MemDevice>(size, read_only, async_threads);
    FileExportOptions opts;
    opts.mountpoint = dir;
    opts.file_name = "disk";
    opts.on_unmounted = [this](int, const std::string &) { unmounted_calls++; };
    map = FileExport::start(device, opts);
  }
  ~Mapped() {
    if (map) map->stop();
    rmdir(dir.c_str());
  }
};

// An fd that closes itself.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::vector<char> pattern(size_t n, unsigned seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = char((i * 131 + seed * 7) & 0xff);
  return v;
}

// A buffer aligned for O_DIRECT.
struct Aligned {
  char *p;
  explicit Aligned(size_t n) : p(static_cast<char *>(std::aligned_alloc(4096, n))) {}
  ~Aligned() { std::free(p); }
};

int errno_of(int rc) { return rc < 0 ? errno : 0; }

}  // namespace

TEST_CASE("the mount holds one regular file of the device's size, 0644 and root's",
          "[rbd][map]") {
  Mapped m(64 * kMiB);
  struct stat st {};
  REQUIRE(stat(m.path.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 07777) == 0644);
  CHECK(st.st_size == off_t(64 * kMiB));
  CHECK(st.st_uid == 0);
  REQUIRE(stat(m.dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);

  std::set<std::string> names;
  DIR *d = opendir(m.dir.c_str());
  REQUIRE(d != nullptr);
  while (dirent *e = readdir(d)) names.insert(e->d_name);
  closedir(d);
  CHECK(names == std::set<std::string>{".", "..", "disk"});

  struct statvfs sv {};
  REQUIRE(statvfs(m.dir.c_str(), &sv) == 0);
  CHECK(uint64_t(sv.f_blocks) * sv.f_frsize == 64 * kMiB);
}

TEST_CASE("reads at the end are short and past it read nothing, writes past it fail ENOSPC",
          "[rbd][map]") {
  Mapped m(4 * kMiB);
  Fd f(open(m.path.c_str(), O_RDWR));
  REQUIRE(f.fd >= 0);
  std::vector<char> data = pattern(4096, 1), back(4096);
  const off_t size = off_t(4 * kMiB);

  CHECK(pwrite(f.fd, data.data(), 4096, size - 100) == 100);  // short across the end
  CHECK(pread(f.fd, back.data(), 4096, size - 100) == 100);
  CHECK(std::memcmp(back.data(), data.data(), 100) == 0);
  CHECK(pread(f.fd, back.data(), 4096, size) == 0);
  CHECK(pread(f.fd, back.data(), 4096, size + 4096) == 0);
  CHECK(errno_of(int(pwrite(f.fd, data.data(), 4096, size))) == ENOSPC);
  CHECK(errno_of(int(pwrite(f.fd, data.data(), 4096, size + kMiB))) == ENOSPC);
}

TEST_CASE("O_DIRECT reads and writes from many threads at once reach the device intact",
          "[rbd][map]") {
  Mapped m(64 * kMiB, false, 3);
  constexpr int kThreads = 4, kRounds = 16;
  constexpr size_t kLen = 256 * 1024;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int fd = open(m.path.c_str(), O_RDWR | O_DIRECT);
      if (fd < 0) {
        bad++;
        return;
      }
      Aligned out(kLen), in(kLen);
      for (int r = 0; r < kRounds; ++r) {
        off_t off = off_t((t * kRounds + r) * kLen);
        std::vector<char> p = pattern(kLen, unsigned(t * 100 + r));
        std::memcpy(out.p, p.data(), kLen);
        if (pwrite(fd, out.p, kLen, off) != ssize_t(kLen)) bad++;
        if (pread(fd, in.p, kLen, off) != ssize_t(kLen) || std::memcmp(in.p, out.p, kLen) != 0)
          bad++;
      }
      close(fd);
    });
  }
  for (auto &th : threads) th.join();
  CHECK(bad == 0);
  CHECK(m.map->stats().errors == 0);
  CHECK(m.map->stats().bytes_written == uint64_t(kThreads) * kRounds * kLen);
}

TEST_CASE("creating, removing, renaming, resizing and chmod are refused with EPERM",
          "[rbd][map]") {
  Mapped m(4 * kMiB);
  std::string other = m.dir + "/other";
  CHECK(errno_of(open(other.c_str(), O_CREAT | O_RDWR, 0644)) == EPERM);
  CHECK(errno_of(mkdir(other.c_str(), 0755)) == EPERM);
  CHECK(errno_of(unlink(m.path.c_str())) == EPERM);
  CHECK(errno_of(rename(m.path.c_str(), other.c_str())) == EPERM);
  CHECK(errno_of(truncate(m.path.c_str(), 2 * kMiB)) == EPERM);
  CHECK(errno_of(truncate(m.path.c_str(), 8 * kMiB)) == EPERM);
  CHECK(truncate(m.path.c_str(), 4 * kMiB) == 0);  // its own size: nothing changes
  CHECK(errno_of(chmod(m.path.c_str(), 0600)) == EPERM);
  CHECK(errno_of(open(m.path.c_str(), O_RDWR | O_TRUNC)) == EPERM);
  struct stat st {};
  REQUIRE(stat(m.path.c_str(), &st) == 0);
  CHECK(st.st_size == off_t(4 * kMiB));
}

TEST_CASE("SEEK_DATA and SEEK_HOLE follow the device's extents", "[rbd][map]") {
  Mapped m(16 * kMiB);
  Fd f(open(m.path.c_str(), O_RDWR));
  REQUIRE(f.fd >= 0);
  const off_t size = off_t(16 * kMiB), chunk = off_t(rbdtest::MemDevice::kChunk);

  SECTION("an unwritten device is one hole up to the end") {
    CHECK(errno_of(int(lseek(f.fd, 0, SEEK_DATA))) == ENXIO);
    CHECK(lseek(f.fd, 0, SEEK_HOLE) == 0);
    CHECK(lseek(f.fd, 5 * kMiB, SEEK_HOLE) == off_t(5 * kMiB));
  }
  SECTION("written chunks are data, the rest holes") {
    std::vector<char> data = pattern(4096, 2);
    REQUIRE(pwrite(f.fd, data.data(), 4096, off_t(kMiB) + 10) == 4096);
    REQUIRE(pwrite(f.fd, data.data(), 4096, size - 4096) == 4096);
    CHECK(lseek(f.fd, 0, SEEK_DATA) == off_t(kMiB));
    CHECK(lseek(f.fd, off_t(kMiB) + 100, SEEK_DATA) == off_t(kMiB) + 100);
    CHECK(lseek(f.fd, off_t(kMiB), SEEK_HOLE) == off_t(kMiB) + chunk);
    CHECK(lseek(f.fd, off_t(kMiB) + chunk, SEEK_DATA) == size - chunk);
    CHECK(lseek(f.fd, size - chunk, SEEK_HOLE) == size);  // the end counts as a hole
  }
  CHECK(errno_of(int(lseek(f.fd, size, SEEK_DATA))) == ENXIO);
  CHECK(errno_of(int(lseek(f.fd, size, SEEK_HOLE))) == ENXIO);
}

TEST_CASE("fallocate: punch hole discards, zero range zeros, allocation is a no-op within the size",
          "[rbd][map]") {
  Mapped m(8 * kMiB);
  Fd f(open(m.path.c_str(), O_RDWR));
  REQUIRE(f.fd >= 0);
  std::vector<char> data = pattern(kMiB, 3), back(kMiB), zeros(kMiB, 0);
  REQUIRE(pwrite(f.fd, data.data(), kMiB, 0) == off_t(kMiB));
  REQUIRE(pwrite(f.fd, data.data(), kMiB, off_t(2 * kMiB)) == off_t(kMiB));
  size_t chunks = m.device->allocated_chunks();

  CHECK(fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, off_t(kMiB)) == 0);
  CHECK(m.device->allocated_chunks() < chunks);
  REQUIRE(pread(f.fd, back.data(), kMiB, 0) == off_t(kMiB));
  CHECK(back == zeros);

  CHECK(fallocate(f.fd, FALLOC_FL_ZERO_RANGE, off_t(2 * kMiB) + 4096, 8192) == 0);
  REQUIRE(pread(f.fd, back.data(), kMiB, off_t(2 * kMiB)) == off_t(kMiB));
  CHECK(std::memcmp(back.data(), data.data(), 4096) == 0);
  CHECK(std::memcmp(back.data() + 4096, zeros.data(), 8192) == 0);
  CHECK(std::memcmp(back.data() + 12288, data.data() + 12288, kMiB - 12288) == 0);

  CHECK(fallocate(f.fd, 0, 0, off_t(8 * kMiB)) == 0);
  CHECK(fallocate(f.fd, FALLOC_FL_KEEP_SIZE, off_t(7 * kMiB), off_t(4 * kMiB)) == 0);
  CHECK(errno_of(fallocate(f.fd, 0, off_t(7 * kMiB), off_t(4 * kMiB))) == EFBIG);
  CHECK(errno_of(fallocate(f.fd, FALLOC_FL_COLLAPSE_RANGE, 0, off_t(kMiB))) == EOPNOTSUPP);
  CHECK(m.map->stats().discards == 1);
}

TEST_CASE("fsync flushes the device, and close does after writes only", "[rbd][map]") {
  Mapped m(4 * kMiB);
  std::vector<char> data = pattern(4096, 4);
  {
    Fd f(open(m.path.c_str(), O_RDWR));
    REQUIRE(f.fd >= 0);
    REQUIRE(pwrite(f.fd, data.data(), 4096, 0) == 4096);
    CHECK(fsync(f.fd) == 0);
    CHECK(m.device->flushes() == 1);
    CHECK(fdatasync(f.fd) == 0);
    CHECK(m.device->flushes() == 2);
  }
  CHECK(m.device->flushes() == 2);  // nothing written since the fsync
  {
    Fd f(open(m.path.c_str(), O_RDWR));
    REQUIRE(pwrite(f.fd, data.data(), 4096, 0) == 4096);
  }
  CHECK(m.device->flushes() == 3);
  {
    Fd f(open(m.path.c_str(), O_RDONLY));
    REQUIRE(pread(f.fd, data.data(), 4096, 0) == 4096);
  }
  CHECK(m.device->flushes() == 3);
}

TEST_CASE("a read-only device gives a 0444 file that refuses writing", "[rbd][map]") {
  Mapped m(4 * kMiB, true);
  struct stat st {};
  REQUIRE(stat(m.path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0444);
  int e = errno_of(open(m.path.c_str(), O_RDWR));
  CHECK((e == EROFS || e == EACCES));  // root gets past the mode, then EROFS
  Fd f(open(m.path.c_str(), O_RDONLY));
  REQUIRE(f.fd >= 0);
  std::vector<char> back(4096, 1);
  CHECK(pread(f.fd, back.data(), 4096, 0) == 4096);
  CHECK(back == std::vector<char>(4096, 0));
}

TEST_CASE("unmounting from outside calls on_unmounted once, and stop() still works after it",
          "[rbd][map]") {
  Mapped m(4 * kMiB);
  std::string cmd = "fusermount3 -u " + m.dir;
  REQUIRE(std::system(cmd.c_str()) == 0);
  for (int i = 0; i < 100 && m.unmounted_calls == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(m.unmounted_calls == 1);
  m.map->stop();
  m.map->stop();  // idempotent
  CHECK(m.unmounted_calls == 1);
}

TEST_CASE("mapping onto a directory that does not exist throws an Error naming it",
          "[rbd][map]") {
  FileExportOptions opts;
  opts.mountpoint = std::string(MAP_TEST_SCRATCH) + "/no-such-dir";
  opts.file_name = "disk";
  auto device = std::make_shared<rbdtest::MemDevice>(kMiB);
  try {
    FileExport::start(device, opts);
    FAIL("start() returned");
  } catch (const strata::sdk::Error &e) {
    CHECK(std::string(e.what()).find(opts.mountpoint) != std::string::npos);
    CHECK(e.code() < 0);
  }
  opts.mountpoint = MAP_TEST_SCRATCH;
  opts.file_name = "a/b";
  CHECK_THROWS_AS(FileExport::start(device, opts), strata::sdk::Error);
}

TEST_CASE("stop() with the file still open ends the map: the open file then fails",
          "[rbd][map]") {
  if (geteuid() != 0) {
    // fusermount3 -u -z only detaches: the kernel keeps the connection,
    // and the loop its threads, while the file is open.
    WARN("needs root (umount2 MNT_FORCE); skipped");
    return;
  }
  Mapped m(4 * kMiB);
  Fd f(open(m.path.c_str(), O_RDWR));
  REQUIRE(f.fd >= 0);
  m.map->stop();
  std::vector<char> back(4096);
  CHECK(pread(f.fd, back.data(), 4096, 0) < 0);
  CHECK(m.unmounted_calls == 0);  // stop() is not "unmounted from outside"
}
