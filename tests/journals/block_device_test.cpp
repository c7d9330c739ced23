// The `file` journal on a block device: a loop device over a temporary image,
// detached when the test ends however it ends.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>

#include "journal_test_support.h"

using namespace strata::journal_test;

namespace {

std::string run(const std::string &cmd, int *status) {
  std::string out;
  FILE *p = ::popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  std::array<char, 256> buf;
  while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
  *status = ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// A loop device over a fresh image of `bytes`; empty device() when this
// machine cannot make one (no root, no loop driver).
class LoopDevice {
 public:
  explicit LoopDevice(uint64_t bytes) : image_(dir_.path() + "/image") {
    int fd = ::open(image_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    int status = 0;
    std::string dev = run("losetup -f --show " + image_ + " 2>/dev/null", &status);
    if (status == 0 && dev.rfind("/dev/", 0) == 0) device_ = dev;
  }
  ~LoopDevice() {
    if (device_.empty()) return;
    int status = 0;
    run("losetup -d " + device_ + " 2>&1", &status);
    if (status != 0) std::fprintf(stderr, "could not detach %s\n", device_.c_str());
  }
  LoopDevice(const LoopDevice &) = delete;
  LoopDevice &operator=(const LoopDevice &) = delete;
  const std::string &device() const { return device_; }

 private:
  TempDir dir_;
  std::string image_;
  std::string device_;
};

}  // namespace

TEST_CASE("a file journal on a block device uses the whole device and keeps its records",
          "[journal][file][blockdev]") {
  constexpr uint64_t kDevice = 16 << 20;
  LoopDevice loop(kDevice);
  if (loop.device().empty()) {
    WARN("no loop device available (losetup failed); skipping");
    return;
  }
  HostLog log;
  OpenArgs args("file", loop.device(), {}, &log);
  Journal::create("file", args, 0);
  {
    Journal j("file", args);
    CHECK(log.contains("(block device)"));
    CHECK(log.contains("io_uring"));
    CHECK(j.stat().capacity_bytes == kDevice - 2 * 4096);
    j.replay();
    Acks acks;
    for (uint64_t s = 1; s <= 3000; ++s) {
      j.append(s, payload_for(s, 5000 + s % 3000), &Acks::callback, acks.arg_for(s));
      if (s > 100) j.trim(s - 100);  // a 16 MiB ring wraps about twice
    }
    acks.wait_for(3000);
    for (const auto &[seq, rc] : acks.seen()) REQUIRE(rc == 0);
  }
  Journal j("file", args);
  Replayed r = j.replay(2900);
  REQUIRE(r.records.size() == 100);
  for (const auto &[seq, data] : r.records) REQUIRE(data == payload_for(seq, 5000 + seq % 3000));
  CHECK(r.result.last_seq == 3000);
}

TEST_CASE("a capacity larger than the block device is clamped to the device with a warning",
          "[journal][file][blockdev]") {
  LoopDevice loop(4 << 20);
  if (loop.device().empty()) {
    WARN("no loop device available (losetup failed); skipping");
    return;
  }
  HostLog log;
  OpenArgs args("file", loop.device(), {}, &log);
  Journal::create("file", args, 1ull << 30);
  CHECK(log.contains("using the whole device"));
  Journal j("file", args);
  CHECK(j.stat().capacity_bytes == (4 << 20) - 2 * 4096);
}

TEST_CASE("destroying a journal on a block device wipes it so that it no longer opens",
          "[journal][file][blockdev]") {
  LoopDevice loop(4 << 20);
  if (loop.device().empty()) {
    WARN("no loop device available (losetup failed); skipping");
    return;
  }
  OpenArgs args("file", loop.device());
  Journal::create("file", args, 0);
  { Journal j("file", args); }
  Journal::destroy("file", args);
  try {
    Journal j("file", args);
    FAIL("a destroyed journal opened");
  } catch (const CallFailed &e) {
    CHECK(e.rc() == -EUCLEAN);
  }
}
