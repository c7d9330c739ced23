#include "kernel_nbd_export.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nbd_client_handshake.h"
#include "nbd_device_picker.h"
#include "nbd_protocol.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/plugin.h"

namespace strata::rbd {

namespace {

// The export's name on the private socketpair: nobody else can ask.
constexpr const char *kExportName = "kernel";
// The driver sends reads and writes of up to 32 MiB (max_hw_sectors 65536).
constexpr uint32_t kKernelMaxRequest = 32u << 20;

}  // namespace

uint32_t kernel_block_size(uint64_t size, uint32_t min_block) {
  for (uint32_t bs = 4096; bs >= 512; bs /= 2)
    if (size % bs == 0 && bs >= min_block) return bs;
  return 0;
}

std::unique_ptr<KernelNbdExport> KernelNbdExport::start(std::shared_ptr<BlockDevice> device,
                                                        KernelNbdExportOptions o) {
  std::string dev = o.device;
  if (dev.empty() || dev == "auto") {
    std::string why;
    dev = pick_free_nbd_device(o.sysfs_root, o.dev_root, &why);
    if (dev.empty()) throw sdk::Error(-ENODEV, "nbd device auto: " + why);
  }
  std::unique_ptr<KernelNbdExport> e(new KernelNbdExport());
  e->device_ = dev;

  NbdServerOptions so;
  so.read_only = o.read_only;
  so.max_payload = kKernelMaxRequest;
  so.log = o.log;
  e->server_ = NbdServer::start_unlistening({{kExportName, o.description, device}}, so);

  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw sdk::make_error(-errno, "%s: socketpair: %s", dev.c_str(), std::strerror(errno));
  if (int rc = e->server_->adopt(fds[1]); rc != 0) {
    ::close(fds[0]);
    throw sdk::make_error(rc, "%s: the NBD server refused its socket: %s", dev.c_str(),
                          std::strerror(-rc));
  }
  NbdClientExport got;
  std::string why;
  if (int rc = nbd_client_go(fds[0], kExportName, 10000, &got, &why); rc != 0) {
    ::close(fds[0]);
    throw sdk::Error(rc, dev + ": " + why);
  }
  uint32_t bs = kernel_block_size(got.size, got.min_block);
  if (bs == 0) {
    ::close(fds[0]);
    throw sdk::make_error(-EINVAL,
                          "%s: a size of %llu bytes is not a whole number of 512-byte sectors "
                          "(or the device needs blocks over 4096 bytes)",
                          dev.c_str(), static_cast<unsigned long long>(got.size));
  }

  KernelNbdConfig kc;
  kc.device = dev;
  kc.sysfs_root = o.sysfs_root;
  kc.size = got.size;
  kc.block_size = bs;
  kc.flags = got.transmission_flags;
  kc.timeout_s = o.timeout_s;
  kc.on_ended = o.on_ended;
  kc.ops = o.ops;
  if (int rc = KernelNbdDevice::attach(std::move(kc), fds[0], &e->kernel_, &why); rc != 0)
    throw sdk::Error(rc, why);
  if (o.log)
    o.log(STRATA_LOG_INFO, dev + ": attached (" + std::to_string(got.size >> 20) + " MiB, " +
                               std::to_string(bs) + "-byte blocks" +
                               (got.transmission_flags & nbd::kTxReadOnly ? ", read-only)" : ")"));
  return e;
}

KernelNbdExport::~KernelNbdExport() {
  if (!stopped_) {
    std::string why;
    stop(&why);
  }
}

int KernelNbdExport::stop(std::string *why) {
  if (stopped_) return 0;
  stopped_ = true;
  // The device first: the kernel's requests in flight still need the
  // server to answer them.
  int rc = kernel_ ? kernel_->detach(why) : 0;
  server_->stop();
  return rc;
}

}  // namespace strata::rbd
