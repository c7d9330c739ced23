// KernelNbdDevice (kernel_nbd/kernel_nbd_device.h) with a stand-in for the
// kernel, since the machines these run on have no nbd driver: FakeKernel
// records every call, and its NBD_DO_IT behaves as the driver's does for
// this purpose — it shows the device's pid in a fake sysfs tree, sends
// NBD_CMD_DISC on the socket after NBD_DISCONNECT, and returns when the
// server closes the socket. The server is the project's, over a socketpair
// negotiated by the real client handshake. Also: choosing a free device.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
// After sys/ioctl.h: linux/nbd.h uses _IO without including it.
#include <linux/nbd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernel_nbd_device.h"
#include "kernel_nbd_export.h"
#include "mem_device.h"
#include "nbd_client_handshake.h"
#include "nbd_device_picker.h"
#include "nbd_protocol.h"
#include "nbd_server.h"
#include "nbd_socket.h"
#include "strata/cpp/plugin_support.hpp"

using namespace strata::rbd;
namespace fs = std::filesystem;

namespace {

// A sysfs root of our own with block/nbdN directories; removed at the end.
struct FakeSysfs {
  FakeSysfs() {
    char tmpl[] = "/tmp/strata-knbd-sysfs-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    root = tmpl;
  }
  ~FakeSysfs() { fs::remove_all(root); }
  void add(int n, long pid = 0) {
    fs::create_directories(dir(n));
    if (pid) std::ofstream(dir(n) + "/pid") << pid << "\n";
  }
  std::string dir(int n) const { return root + "/block/nbd" + std::to_string(n); }
  std::string root;
};

class FakeKernel : public NbdKernelOps {
 public:
  explicit FakeKernel(std::string sysfs_root) : sysfs_(std::move(sysfs_root)) {}

  unsigned long fail_request = 0;  // this ioctl returns fail_with
  int fail_with = 0;
  bool ignore_disconnect = false;  // NBD_DISCONNECT sends nothing
  bool show_pid = true;            // NBD_DO_IT writes sysfs .../pid

  int open_device(const std::string &path) override {
    record("open " + path);
    device_ = path.substr(path.rfind('/') + 1);
    return 1000;
  }
  int ioctl(int fd, unsigned long request, unsigned long arg) override {
    REQUIRE(fd == 1000);
    record(name(request, arg));
    if (request == fail_request) return fail_with;
    if (request == NBD_SET_SOCK) sock_ = int(arg);
    if (request == NBD_DISCONNECT) disconnect_ = true;
    if (request == NBD_DO_IT) return do_it();
    return 0;
  }
  int fsync(int) override {
    record("fsync");
    return 0;
  }
  void close_device(int) override { record("close"); }

  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> l(mu_);
    return calls_;
  }

 private:
  static std::string name(unsigned long r, unsigned long arg) {
    switch (r) {
      case NBD_SET_BLKSIZE: return "NBD_SET_BLKSIZE " + std::to_string(arg);
      case NBD_SET_SIZE_BLOCKS: return "NBD_SET_SIZE_BLOCKS " + std::to_string(arg);
      case NBD_SET_FLAGS: return "NBD_SET_FLAGS " + std::to_string(arg);
      case NBD_SET_TIMEOUT: return "NBD_SET_TIMEOUT " + std::to_string(arg);
      case NBD_SET_SOCK: return "NBD_SET_SOCK";
      case NBD_DO_IT: return "NBD_DO_IT";
      case NBD_DISCONNECT: return "NBD_DISCONNECT";
      case NBD_CLEAR_QUE: return "NBD_CLEAR_QUE";
      case NBD_CLEAR_SOCK: return "NBD_CLEAR_SOCK";
      default: return "ioctl " + std::to_string(r);
    }
  }
  void record(const std::string &c) {
    std::lock_guard<std::mutex> l(mu_);
    calls_.push_back(c);
  }
  // The driver's receive loop, reduced: until the server closes.
  int do_it() {
    std::string pid = sysfs_ + "/block/" + device_ + "/pid";
    if (show_pid) std::ofstream(pid) << ::gettid() << "\n";
    bool sent = false;
    for (;;) {
      if (disconnect_ && !sent && !ignore_disconnect) {
        std::string disc;
        strata::rbd::nbd::put32(disc, strata::rbd::nbd::kRequestMagic);
        strata::rbd::nbd::put16(disc, 0);
        strata::rbd::nbd::put16(disc, strata::rbd::nbd::kCmdDisc);
        disc.append(20, '\0');  // cookie, offset, length
        REQUIRE(strata::rbd::nbd::write_all(sock_, disc.data(), disc.size()) == 0);
        sent = true;
      }
      pollfd p{sock_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[256];
      ssize_t n = ::recv(sock_, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    }
    ::unlink(pid.c_str());
    return disconnect_ ? 0 : -ECONNRESET;
  }

  std::string sysfs_;
  std::string device_;
  int sock_ = -1;
  std::atomic<bool> disconnect_{false};
  std::mutex mu_;
  std::vector<std::string> calls_;
};

// The project's server on one end of a socketpair, the client handshake
// done on the other: `client` is what the kernel would be handed.
struct Negotiated {
  explicit Negotiated(uint64_t size = 1 << 20) {
    dev = std::make_shared<rbdtest::MemDevice>(size);
    server = NbdServer::start_unlistening({{"rbd/disk", "", dev}}, {});
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    REQUIRE(server->adopt(fds[1]) == 0);
    client = fds[0];
    std::string why;
    REQUIRE(nbd_client_go(client, "rbd/disk", 5000, &e, &why) == 0);
  }
  KernelNbdConfig config(const FakeSysfs &sys, FakeKernel &k) const {
    KernelNbdConfig c;
    c.device = "/dev/nbd3";
    c.sysfs_root = sys.root;
    c.size = e.size;
    c.block_size = 4096;
    c.flags = e.transmission_flags;
    c.ops = &k;
    return c;
  }
  std::shared_ptr<rbdtest::MemDevice> dev;
  std::unique_ptr<NbdServer> server;
  int client = -1;
  NbdClientExport e;
};

// Whether the client's socket was closed, seen from the server's end: the
// fd number itself says nothing, as the server's threads may reuse it as
// soon as it is closed.
bool server_let_go(const Negotiated &n) {
  for (int i = 0; i < 500 && n.server->stats().connections_open != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return n.server->stats().connections_open == 0;
}

}  // namespace

TEST_CASE("kernel nbd device: attach configures in nbd-client's order, detach disconnects", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  Negotiated n;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  REQUIRE(KernelNbdDevice::attach(n.config(sys, k), n.client, &d, &why) == 0);
  CHECK(d->device() == "/dev/nbd3");
  CHECK(nbd_device_owner("/dev/nbd3", sys.root) > 0);
  CHECK(d->detach(&why) == 0);
  std::vector<std::string> want = {
      "open /dev/nbd3",
      "NBD_SET_BLKSIZE 4096",
      "NBD_SET_SIZE_BLOCKS 256",
      "NBD_SET_FLAGS " + std::to_string(n.e.transmission_flags),
      "NBD_SET_TIMEOUT 0",
      "NBD_SET_SOCK",
      "NBD_DO_IT",
      "fsync",
      "NBD_DISCONNECT",
      "NBD_CLEAR_QUE",
      "NBD_CLEAR_SOCK",
      "close"};
  CHECK(k.calls() == want);
  CHECK(nbd_device_owner("/dev/nbd3", sys.root) == 0);
  // The server saw NBD_CMD_DISC and let the connection go.
  CHECK(server_let_go(n));
  CHECK(n.server->stats().protocol_errors == 0);
}

TEST_CASE("kernel nbd device: a device in use is refused before any ioctl", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3, 4242);
  FakeKernel k(sys.root);
  Negotiated n;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  CHECK(KernelNbdDevice::attach(n.config(sys, k), n.client, &d, &why) == -EBUSY);
  CHECK(why == "/dev/nbd3: in use by process 4242");
  CHECK(k.calls().empty());
  CHECK(server_let_go(n));
  CHECK_FALSE(d);
}

TEST_CASE("kernel nbd device: a device sysfs does not know is ENODEV", "[kernel_nbd]") {
  FakeSysfs sys;
  FakeKernel k(sys.root);
  Negotiated n;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  CHECK(KernelNbdDevice::attach(n.config(sys, k), n.client, &d, &why) == -ENODEV);
  CHECK(why.find("/dev/nbd3: no such device") == 0);
}

TEST_CASE("kernel nbd device: a failing ioctl names the device and the step", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  k.fail_request = NBD_SET_SOCK;
  k.fail_with = -EBUSY;
  Negotiated n;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  CHECK(KernelNbdDevice::attach(n.config(sys, k), n.client, &d, &why) == -EBUSY);
  CHECK(why.find("/dev/nbd3: NBD_SET_SOCK (the device is in use by another process)") == 0);
  auto calls = k.calls();
  CHECK(calls.back() == "close");
  CHECK(std::find(calls.begin(), calls.end(), "NBD_DO_IT") == calls.end());
  CHECK(server_let_go(n));
}

TEST_CASE("kernel nbd device: NBD_DO_IT failing at once fails the attach", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  k.fail_request = NBD_DO_IT;
  k.fail_with = -EINVAL;
  Negotiated n;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  CHECK(KernelNbdDevice::attach(n.config(sys, k), n.client, &d, &why) == -EINVAL);
  CHECK(why.find("/dev/nbd3: NBD_DO_IT: ") == 0);
  auto calls = k.calls();
  REQUIRE(calls.size() >= 3);
  CHECK(calls[calls.size() - 2] == "NBD_CLEAR_SOCK");
  CHECK(server_let_go(n));
}

TEST_CASE("kernel nbd device: the server going away ends the device and says so", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  Negotiated n;
  std::mutex mu;
  std::condition_variable cv;
  bool ended = false;
  std::string ended_why;
  KernelNbdConfig c = n.config(sys, k);
  c.on_ended = [&](int rc, const std::string &w) {
    std::lock_guard<std::mutex> l(mu);
    ended = true;
    ended_why = w;
    CHECK(rc != 0);
    cv.notify_all();
  };
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  REQUIRE(KernelNbdDevice::attach(std::move(c), n.client, &d, &why) == 0);
  n.server->stop();
  {
    std::unique_lock<std::mutex> l(mu);
    REQUIRE(cv.wait_for(l, std::chrono::seconds(10), [&] { return ended; }));
  }
  CHECK(ended_why.find("/dev/nbd3") == 0);
  CHECK(d->detach(&why) != 0);
  CHECK(why.find("/dev/nbd3: NBD_DO_IT: ") == 0);
  // No disconnect for a device that already ended.
  auto calls = k.calls();
  CHECK(std::find(calls.begin(), calls.end(), "NBD_DISCONNECT") == calls.end());
}

TEST_CASE("kernel nbd device: a disconnect never answered ends by shutting the socket down", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  k.ignore_disconnect = true;
  Negotiated n;
  KernelNbdConfig c = n.config(sys, k);
  c.disconnect_grace_ms = 200;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  REQUIRE(KernelNbdDevice::attach(std::move(c), n.client, &d, &why) == 0);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(d->detach(&why) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(k.calls().back() == "close");
}

TEST_CASE("kernel nbd device: a device that never shows as running times out, detached", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  k.show_pid = false;
  Negotiated n;
  KernelNbdConfig c = n.config(sys, k);
  c.start_timeout_ms = 200;
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  CHECK(KernelNbdDevice::attach(std::move(c), n.client, &d, &why) == -ETIMEDOUT);
  CHECK(why.find("/dev/nbd3: not running after 200 ms") == 0);
  auto calls = k.calls();
  CHECK(std::find(calls.begin(), calls.end(), "NBD_DISCONNECT") != calls.end());
  CHECK(calls.back() == "close");
}

TEST_CASE("kernel nbd device: geometry the driver cannot take is refused", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(3);
  FakeKernel k(sys.root);
  std::unique_ptr<KernelNbdDevice> d;
  std::string why;
  SECTION("block size") {
    Negotiated n;
    KernelNbdConfig c = n.config(sys, k);
    c.block_size = 8192;
    CHECK(KernelNbdDevice::attach(std::move(c), n.client, &d, &why) == -EINVAL);
    CHECK(why.find("block size 8192") != std::string::npos);
  }
  SECTION("size not in whole blocks") {
    Negotiated n((1 << 20) + 512);
    CHECK(KernelNbdDevice::attach(n.config(sys, k), n.client, &d, &why) == -EINVAL);
    CHECK(why.find("not a whole number of 4096-byte blocks") != std::string::npos);
  }
  CHECK(k.calls().empty());
}

TEST_CASE("kernel nbd devices: auto picks the free device with the lowest number", "[kernel_nbd]") {
  FakeSysfs sys;
  std::string why;
  SECTION("no driver") {
    CHECK(pick_free_nbd_device(sys.root, "/dev", &why).empty());
    CHECK(why.find("modprobe nbd") != std::string::npos);
  }
  SECTION("nbd0 and nbd2 taken, nbd10 and nbd1 free") {
    sys.add(0, 100);
    sys.add(2, 101);
    sys.add(10);
    sys.add(1);
    fs::create_directories(sys.root + "/block/loop0");
    CHECK(pick_free_nbd_device(sys.root, "/dev", &why) == "/dev/nbd1");
  }
  SECTION("numbers sort as numbers") {
    sys.add(0, 100);
    sys.add(10);
    sys.add(9);
    CHECK(pick_free_nbd_device(sys.root, "/dev", &why) == "/dev/nbd9");
  }
  SECTION("all taken") {
    sys.add(0, 100);
    sys.add(1, 101);
    CHECK(pick_free_nbd_device(sys.root, "/dev", &why).empty());
    CHECK(why.find("all 2 nbd devices") == 0);
  }
}

TEST_CASE("kernel nbd devices: names and owners", "[kernel_nbd]") {
  CHECK(nbd_device_name("/dev/nbd0") == "nbd0");
  CHECK(nbd_device_name("/dev/nbd15") == "nbd15");
  CHECK(nbd_device_name("nbd3") == "nbd3");
  CHECK(nbd_device_name("/dev/nbd").empty());
  CHECK(nbd_device_name("/dev/nbd0p1").empty());
  CHECK(nbd_device_name("/dev/sda").empty());
  FakeSysfs sys;
  sys.add(0, 77);
  sys.add(1);
  CHECK(nbd_device_owner("/dev/nbd0", sys.root) == 77);
  CHECK(nbd_device_owner("/dev/nbd1", sys.root) == 0);
  CHECK(nbd_device_owner("/dev/nbd2", sys.root) == -ENODEV);
  CHECK(nbd_device_owner("/dev/sda", sys.root) == -EINVAL);
  // The driver is there when /dev has nbdN nodes; a plain file stands in.
  CHECK_FALSE(kernel_nbd_present(sys.root));
  std::ofstream(sys.root + "/nbd0") << "";
  CHECK(kernel_nbd_present(sys.root));
}

TEST_CASE("kernel nbd export: auto attaches a MemDevice to the first free device and detaches", "[kernel_nbd]") {
  FakeSysfs sys;
  sys.add(0, 100);
  sys.add(1);
  FakeKernel k(sys.root);
  KernelNbdExportOptions o;
  o.sysfs_root = sys.root;
  o.dev_root = "/dev";
  o.ops = &k;
  std::vector<std::string> lines;
  o.log = [&](int, const std::string &line) { lines.push_back(line); };
  auto e = KernelNbdExport::start(std::make_shared<rbdtest::MemDevice>(8 << 20, true), o);
  CHECK(e->device() == "/dev/nbd1");
  CHECK(e->stats().connections_open == 1);
  std::string why;
  CHECK(e->stop(&why) == 0);
  CHECK(e->stats().connections_open == 0);
  auto calls = k.calls();
  REQUIRE(calls.size() > 4);
  CHECK(calls[0] == "open /dev/nbd1");
  CHECK(calls[1] == "NBD_SET_BLKSIZE 4096");
  CHECK(calls[2] == "NBD_SET_SIZE_BLOCKS 2048");
  // The server's read-only flag reaches the driver (set_disk_ro).
  uint16_t flags = uint16_t(std::stoul(calls[3].substr(std::string("NBD_SET_FLAGS ").size())));
  CHECK((flags & strata::rbd::nbd::kTxReadOnly) != 0);
  CHECK((flags & strata::rbd::nbd::kTxHasFlags) != 0);
  CHECK(std::find(lines.begin(), lines.end(), "/dev/nbd1: attached (8 MiB, 4096-byte blocks, read-only)") !=
        lines.end());
}

TEST_CASE("kernel nbd export: failures name the device and leave nothing running", "[kernel_nbd]") {
  FakeSysfs sys;
  FakeKernel k(sys.root);
  KernelNbdExportOptions o;
  o.sysfs_root = sys.root;
  o.ops = &k;
  SECTION("no free device") {
    sys.add(0, 100);
    try {
      KernelNbdExport::start(std::make_shared<rbdtest::MemDevice>(1 << 20), o);
      FAIL("started");
    } catch (const strata::sdk::Error &e) {
      CHECK(std::string(e.what()).find("nbd device auto: all 1 nbd devices") == 0);
    }
  }
  SECTION("a size in no whole sectors") {
    sys.add(0);
    o.device = "/dev/nbd0";
    try {
      KernelNbdExport::start(std::make_shared<rbdtest::MemDevice>((1 << 20) + 100), o);
      FAIL("started");
    } catch (const strata::sdk::Error &e) {
      CHECK(std::string(e.what()).find("/dev/nbd0: a size of 1048676 bytes") == 0);
    }
  }
  SECTION("the device refuses") {
    sys.add(0);
    o.device = "/dev/nbd0";
    k.fail_request = NBD_SET_BLKSIZE;
    k.fail_with = -EPERM;
    try {
      KernelNbdExport::start(std::make_shared<rbdtest::MemDevice>(1 << 20), o);
      FAIL("started");
    } catch (const strata::sdk::Error &e) {
      CHECK(std::string(e.what()).find("/dev/nbd0: NBD_SET_BLKSIZE (needs CAP_SYS_ADMIN: run as root)") == 0);
    }
  }
}

TEST_CASE("kernel nbd export: the block size divides the size, 512 to 4096", "[kernel_nbd]") {
  CHECK(kernel_block_size(1 << 20, 1) == 4096);
  CHECK(kernel_block_size((1 << 20) + 512, 1) == 512);
  CHECK(kernel_block_size((1 << 20) + 2048, 1) == 2048);
  CHECK(kernel_block_size((1 << 20) + 2048, 4096) == 0);
  CHECK(kernel_block_size((1 << 20) + 100, 1) == 0);
  CHECK(kernel_block_size(1 << 20, 8192) == 0);
}
