// What the `strata image` commands share: parsing POOL/NAME[@SNAP], an
// ImageStore on the pool, turning the image library's errors into the
// CLI's, and moving bytes between an Image and a file descriptor.
#pragma once

#include <memory>
#include <string>

#include "cli/cmd_client_common.h"
#include "image.h"
#include "image_spec.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::cli {

// The images of `pool` through the session's client (ioctx owned by it).
Result<std::unique_ptr<rbd::ImageStore>> image_store(Session &s, const std::string &pool);

// Runs f, turning a strata::sdk::Error (what the image library throws)
// into a failing Status.
template <class F>
Status image_call(F &&f) {
  try {
    f();
    return Status::OK();
  } catch (const std::exception &e) {
    int code = EIO;
    if (auto *err = dynamic_cast<const strata::sdk::Error *>(&e)) code = -err->code();
    return Status::Error(code, e.what());
  }
}

// Copies the whole device to fd (sparse when fd is a regular file:
// all-zero blocks become holes). Returns the bytes copied.
Result<uint64_t> copy_image_to_fd(rbd::BlockDevice &dev, int fd, const std::string &what);
// Copies `size` bytes of fd into the device, skipping all-zero blocks
// (the image stays thin), then flushes it.
Result<uint64_t> copy_fd_to_image(int fd, uint64_t size, rbd::BlockDevice &dev,
                                  const std::string &what);

}  // namespace strata::cli
