// A /dev/nbdN driven by the kernel's NBD client over a socket we already
// negotiated on (linux/nbd.h, the ioctl interface nbd-client uses):
//
//   attach:  open /dev/nbdN; NBD_SET_BLKSIZE, NBD_SET_SIZE_BLOCKS,
//            NBD_SET_FLAGS (the server's transmission flags),
//            NBD_SET_TIMEOUT, NBD_SET_SOCK; then NBD_DO_IT, which runs the
//            device and blocks until it is disconnected, on a thread of
//            its own. The device is up once sysfs shows its pid.
//   detach:  fsync the device (its page cache), NBD_DISCONNECT (the kernel
//            sends NBD_CMD_DISC, the server answers what is in flight and
//            closes); NBD_DO_IT returns; NBD_CLEAR_QUE, NBD_CLEAR_SOCK.
//
// Every ioctl needs CAP_SYS_ADMIN. The setup ioctls and NBD_DO_IT are made
// by the same thread: the driver refuses NBD_SET_SOCK from a task other
// than the one that started setting the device up.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace strata::rbd {

// The system calls on the device, replaceable so tests can stand in for a
// kernel that has no nbd driver. Each returns 0 (or an fd) or -errno.
class NbdKernelOps {
 public:
  virtual ~NbdKernelOps() = default;
  virtual int open_device(const std::string &path) = 0;
  virtual int ioctl(int fd, unsigned long request, unsigned long arg) = 0;
  virtual int fsync(int fd) = 0;
  virtual void close_device(int fd) = 0;
};

// open(2) O_RDWR|O_CLOEXEC, ioctl(2), fsync(2), close(2). Shared, stateless.
NbdKernelOps &real_nbd_kernel_ops();

struct KernelNbdConfig {
  std::string device;  // "/dev/nbdN"
  std::string sysfs_root = "/sys";
  uint64_t size = 0;             // bytes; a multiple of block_size
  uint32_t block_size = 4096;    // 512..4096, a power of two (the driver's limits)
  uint16_t flags = 0;            // NBD_FLAG_* from the handshake
  uint32_t timeout_s = 0;        // per request; 0: the driver waits (and warns) forever
  uint32_t start_timeout_ms = 10000;    // for sysfs to show the device running
  uint32_t disconnect_grace_ms = 30000;  // then the socket is shut down under it
  // Called once, from the device's thread, when NBD_DO_IT returns without
  // detach() having asked (the server went away, a request timed out,
  // someone ran `nbd-client -d`): result 0 or -errno, and why. May be empty.
  std::function<void(int result, const std::string &why)> on_ended;
  NbdKernelOps *ops = nullptr;  // nullptr: real_nbd_kernel_ops()
};

class KernelNbdDevice {
 public:
  // Configures config.device with `sock_fd` (a connected stream socket in
  // the NBD transmission phase; owned from here on, closed in every case)
  // and starts it. 0 and *out once the device runs; else -errno, *why
  // naming the device and the step (e.g. -EBUSY: another process uses
  // it; -EPERM: not root), with nothing left configured.
  static int attach(KernelNbdConfig config, int sock_fd, std::unique_ptr<KernelNbdDevice> *out,
                    std::string *why);
  // Detaches if detach() was not called.
  ~KernelNbdDevice();
  KernelNbdDevice(const KernelNbdDevice &) = delete;
  KernelNbdDevice &operator=(const KernelNbdDevice &) = delete;

  // Disconnects and waits for the device's thread. 0, or NBD_DO_IT's
  // error with *why. From the controlling thread, once; not from on_ended.
  int detach(std::string *why);

  const std::string &device() const;

 private:
  struct State;
  explicit KernelNbdDevice(std::shared_ptr<State> s);
  std::shared_ptr<State> s_;
};

}  // namespace strata::rbd
