#include "kernel_nbd_device.h"

#include <fcntl.h>
#include <linux/nbd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include "nbd_device_picker.h"

namespace strata::rbd {

namespace {

class RealOps final : public NbdKernelOps {
 public:
  int open_device(const std::string &path) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  int ioctl(int fd, unsigned long request, unsigned long arg) override {
    int rc;
    // NBD_DO_IT sleeps interruptibly; a signal delivered to this thread
    // (the host blocks its stop signals) would end it, so retry only the
    // short setup calls.
    do rc = ::ioctl(fd, request, arg);
    while (rc < 0 && errno == EINTR && request != NBD_DO_IT);
    return rc < 0 ? -errno : 0;
  }
  int fsync(int fd) override { return ::fsync(fd) == 0 ? 0 : -errno; }
  void close_device(int fd) override { ::close(fd); }
};

std::string err_text(int rc) { return std::strerror(-rc); }

}  // namespace

NbdKernelOps &real_nbd_kernel_ops() {
  static RealOps ops;
  return ops;
}

struct KernelNbdDevice::State {
  enum class Phase { kSetup, kRunning, kEnded };

  KernelNbdConfig c;
  NbdKernelOps *ops = nullptr;
  int sock_fd = -1;  // ours; the driver holds its own reference after NBD_SET_SOCK
  std::thread thread;

  std::mutex mu;
  std::condition_variable cv;
  Phase phase = Phase::kSetup;  // GUARDED_BY(mu)
  int dev_fd = -1;              // GUARDED_BY(mu) while phase != kEnded
  long tid = 0;                 // GUARDED_BY(mu): the thread in NBD_DO_IT
  bool started = false;         // GUARDED_BY(mu): attach() succeeded
  bool detaching = false;       // GUARDED_BY(mu)
  int result = 0;               // GUARDED_BY(mu): setup's or NBD_DO_IT's
  std::string why;              // GUARDED_BY(mu)

  void run();
  // The device thread's setup; 0 or -errno with *step naming the call.
  int configure(int fd, std::string *step);
  void end(int rc, const std::string &text);
  int stop_and_join(std::string *why);
};

int KernelNbdDevice::State::configure(int fd, std::string *step) {
  struct Call {
    const char *name;
    unsigned long request, arg;
  };
  // nbd-client's order: the geometry, then the flags (read-only, flush,
  // trim...), then the socket; NBD_SET_SIZE_BLOCKS rather than
  // NBD_SET_SIZE keeps the argument small on 32-bit longs.
  const Call calls[] = {
      {"NBD_SET_BLKSIZE", NBD_SET_BLKSIZE, c.block_size},
      {"NBD_SET_SIZE_BLOCKS", NBD_SET_SIZE_BLOCKS, static_cast<unsigned long>(c.size / c.block_size)},
      {"NBD_SET_FLAGS", NBD_SET_FLAGS, c.flags},
      {"NBD_SET_TIMEOUT", NBD_SET_TIMEOUT, c.timeout_s},
      {"NBD_SET_SOCK", NBD_SET_SOCK, static_cast<unsigned long>(sock_fd)},
  };
  for (const Call &call : calls) {
    int rc = ops->ioctl(fd, call.request, call.arg);
    if (rc == 0) continue;
    *step = call.name;
    if (rc == -EBUSY) *step += " (the device is in use by another process)";
    if (rc == -EPERM) *step += " (needs CAP_SYS_ADMIN: run as root)";
    return rc;
  }
  return 0;
}

void KernelNbdDevice::State::end(int rc, const std::string &text) {
  std::lock_guard<std::mutex> l(mu);
  phase = Phase::kEnded;
  result = rc;
  why = text;
  cv.notify_all();
}

void KernelNbdDevice::State::run() {
  int fd = ops->open_device(c.device);
  if (fd < 0) {
    end(fd, c.device + ": open: " + err_text(fd));
    ::close(sock_fd);
    return;
  }
  std::string step;
  if (int rc = configure(fd, &step); rc != 0) {
    // Nothing was started; the driver drops this configuration when the
    // last opener closes the device.
    ops->close_device(fd);
    end(rc, c.device + ": " + step + ": " + err_text(rc));
    ::close(sock_fd);
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu);
    dev_fd = fd;
    tid = long(::gettid());
    phase = Phase::kRunning;
  }
  cv.notify_all();
  // Blocks while the device runs: the driver's receive thread reads the
  // replies off the socket; this returns once it ended (disconnect,
  // server gone, timeout). 0 after a disconnect we asked for.
  int rc = ops->ioctl(fd, NBD_DO_IT, 0);
  bool report;
  {
    std::lock_guard<std::mutex> l(mu);
    phase = Phase::kEnded;
    result = rc;
    why = rc == 0 ? "" : c.device + ": NBD_DO_IT: " + err_text(rc);
    report = started && !detaching;
  }
  cv.notify_all();
  // Requests still queued fail, and the socket is let go, so the device
  // is free for the next user. (NBD_CLEAR_QUE is a no-op on recent
  // kernels, which clear the queue in NBD_DO_IT; older ones need it.)
  ops->ioctl(fd, NBD_CLEAR_QUE, 0);
  ops->ioctl(fd, NBD_CLEAR_SOCK, 0);
  ops->close_device(fd);
  ::close(sock_fd);
  if (report && c.on_ended)
    c.on_ended(rc, rc == 0 ? c.device + " was disconnected" : c.device + ": NBD_DO_IT: " + err_text(rc));
}

int KernelNbdDevice::State::stop_and_join(std::string *out_why) {
  {
    std::unique_lock<std::mutex> l(mu);
    detaching = true;
    if (phase == Phase::kSetup) cv.wait(l, [&] { return phase != Phase::kSetup; });
    if (phase == Phase::kRunning) {
      // The device's page cache first: what was written through it
      // without O_DIRECT reaches the server before the socket goes.
      ops->fsync(dev_fd);
      int rc = ops->ioctl(dev_fd, NBD_DISCONNECT, 0);
      bool ended = rc == 0 && cv.wait_for(l, std::chrono::milliseconds(c.disconnect_grace_ms),
                                          [&] { return phase == Phase::kEnded; });
      // A server that never closes (or a disconnect that could not be
      // sent) must not keep us here: with the socket shut down the
      // driver's receive thread sees EOF and NBD_DO_IT returns.
      if (!ended && phase != Phase::kEnded) ::shutdown(sock_fd, SHUT_RDWR);
    }
  }
  thread.join();
  std::lock_guard<std::mutex> l(mu);
  if (result != 0 && out_why) *out_why = why;
  return result;
}

KernelNbdDevice::KernelNbdDevice(std::shared_ptr<State> s) : s_(std::move(s)) {}

KernelNbdDevice::~KernelNbdDevice() {
  if (s_ && s_->thread.joinable()) s_->stop_and_join(nullptr);
}

int KernelNbdDevice::detach(std::string *why) {
  if (!s_->thread.joinable()) return 0;
  return s_->stop_and_join(why);
}

const std::string &KernelNbdDevice::device() const { return s_->c.device; }

int KernelNbdDevice::attach(KernelNbdConfig config, int sock_fd,
                            std::unique_ptr<KernelNbdDevice> *out, std::string *why) {
  auto fail = [&](int rc, const std::string &text) {
    ::close(sock_fd);
    *why = config.device + ": " + text;
    return rc;
  };
  uint32_t bs = config.block_size;
  if (bs < 512 || bs > 4096 || (bs & (bs - 1)) != 0)
    return fail(-EINVAL, "block size " + std::to_string(bs) + " (the driver takes 512..4096)");
  if (config.size == 0 || config.size % bs != 0)
    return fail(-EINVAL, "size " + std::to_string(config.size) + " is not a whole number of " +
                             std::to_string(bs) + "-byte blocks");
  long owner = nbd_device_owner(config.device, config.sysfs_root);
  if (owner == -EINVAL) return fail(-EINVAL, "not an nbd device name (/dev/nbdN)");
  if (owner == -ENODEV)
    return fail(-ENODEV, "no such device in " + config.sysfs_root + "/block (modprobe nbd?)");
  if (owner > 0) return fail(-EBUSY, "in use by process " + std::to_string(owner));

  auto s = std::make_shared<State>();
  s->c = std::move(config);
  s->ops = s->c.ops ? s->c.ops : &real_nbd_kernel_ops();
  s->sock_fd = sock_fd;
  try {
    s->thread = std::thread([s] { s->run(); });
  } catch (const std::system_error &e) {
    return fail(-EAGAIN, std::string("no thread for the device: ") + e.what());
  }

  // Up once the driver shows our thread as the device's pid (set when
  // NBD_DO_IT has started the device), or failed when the thread ended.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(s->c.start_timeout_ms);
  std::unique_lock<std::mutex> l(s->mu);
  for (;;) {
    if (s->phase == State::Phase::kEnded) {
      int rc = s->result == 0 ? -EIO : s->result;
      std::string text = s->why.empty() ? s->c.device + ": NBD_DO_IT returned at once" : s->why;
      l.unlock();
      s->thread.join();
      *why = text;
      return rc;
    }
    if (s->phase == State::Phase::kRunning &&
        nbd_device_owner(s->c.device, s->c.sysfs_root) == s->tid)
      break;
    if (std::chrono::steady_clock::now() >= deadline) {
      l.unlock();
      s->stop_and_join(nullptr);
      *why = s->c.device + ": not running after " + std::to_string(s->c.start_timeout_ms) +
             " ms (" + s->c.sysfs_root + "/block/" + nbd_device_name(s->c.device) +
             "/pid never named our thread)";
      return -ETIMEDOUT;
    }
    s->cv.wait_for(l, std::chrono::milliseconds(10));
  }
  s->started = true;
  l.unlock();
  out->reset(new KernelNbdDevice(std::move(s)));
  return 0;
}

}  // namespace strata::rbd
