// One BlockDevice as /dev/nbdN: the project's NBD server (listening
// nowhere) serves one end of a socketpair, the client handshake
// (NBD_OPT_GO) runs on the other end, and that end goes to the kernel
// (KernelNbdDevice). The kernel then sends its READ/WRITE/FLUSH/TRIM
// requests to the server like any NBD client.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "block_device.h"
#include "kernel_nbd_device.h"
#include "nbd_server.h"

namespace strata::rbd {

struct KernelNbdExportOptions {
  std::string device = "auto";  // "/dev/nbdN", or "auto": the free one with the lowest N
  std::string description;      // what the server calls the export (logs only)
  bool read_only = false;
  uint32_t timeout_s = 0;       // NBD_SET_TIMEOUT; 0: the driver waits for the cluster
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
  std::function<void(int level, const std::string &line)> log;  // may be empty
  // Called once, from the device's thread, when the device ends without
  // stop() (see KernelNbdConfig::on_ended): signal the controlling thread
  // to stop; do not call stop() from it.
  std::function<void(int result, const std::string &reason)> on_ended;
  NbdKernelOps *ops = nullptr;  // tests: a stand-in kernel
};

class KernelNbdExport {
 public:
  // Serves `device` and attaches it. Throws strata::sdk::Error naming the
  // nbd device (and the step that failed) when it cannot; nothing is left
  // running then.
  static std::unique_ptr<KernelNbdExport> start(std::shared_ptr<BlockDevice> device,
                                                KernelNbdExportOptions opts);
  ~KernelNbdExport();  // stops if stop() was not called

  // Detaches the nbd device (NBD_DISCONNECT: the kernel's requests in
  // flight are answered first), then stops the server. 0, or -errno with
  // *why when the device had ended with an error. From the controlling
  // thread, once.
  int stop(std::string *why);

  const std::string &device() const { return device_; }
  NbdServerStats stats() const { return server_->stats(); }

 private:
  KernelNbdExport() = default;
  std::string device_;
  std::unique_ptr<NbdServer> server_;
  std::unique_ptr<KernelNbdDevice> kernel_;
  bool stopped_ = false;
};

// The block size to give the driver for an export of `size` bytes whose
// server needs requests aligned to `min_block`: the largest power of two
// from 512 to 4096 that divides the size and is at least min_block; 0 when
// there is none (the driver addresses whole 512-byte sectors).
uint32_t kernel_block_size(uint64_t size, uint32_t min_block);

}  // namespace strata::rbd
