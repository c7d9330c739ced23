// lseek(SEEK_DATA / SEEK_HOLE) on the image file, from the device's
// extents: what `cp --sparse`, qemu-img and fiemap-less tools use to skip
// the parts of an image never written.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "image_file.h"

namespace strata::rbd {

namespace {

// Asked of the device at a time: its answer is one Extent per run (a real
// image may answer one per object), so a window bounds the list.
constexpr uint64_t kWindow = 1ull << 30;

// The first offset >= from that is in a hole (want_hole) or holds data;
// the end of the device counts as a hole, as lseek(2) has it. -ENXIO when
// there is no data at or after from, or from is at or past the end.
int64_t find_extent(BlockDevice &device, uint64_t size, uint64_t from, bool want_hole) {
  if (from >= size) return -ENXIO;
  std::vector<Extent> extents;
  for (uint64_t pos = from; pos < size;) {
    int rc = device.extents(pos, std::min(kWindow, size - pos), &extents);
    if (rc < 0) return rc;
    if (extents.empty()) return -EIO;
    for (const Extent &e : extents) {
      if (e.hole == want_hole && e.offset + e.length > pos) return int64_t(std::max(e.offset, pos));
    }
    uint64_t next = extents.back().offset + extents.back().length;
    if (next <= pos) return -EIO;  // a device answering nothing new would loop forever
    pos = next;
  }
  return want_hole ? int64_t(size) : -ENXIO;
}

}  // namespace

void ImageFile::lseek(fuse_req_t req, off_t off, int whence) {
  if ((whence != SEEK_DATA && whence != SEEK_HOLE) || off < 0) {
    fuse_reply_err(req, EINVAL);  // the kernel answers the other whences itself
    return;
  }
  int64_t r;
  try {
    r = find_extent(*device_, size_, static_cast<uint64_t>(off), whence == SEEK_HOLE);
  } catch (...) {
    r = -EIO;
  }
  if (r < 0) {
    fuse_reply_err(req, int(-r));
  } else {
    fuse_reply_lseek(req, r);
  }
}

}  // namespace strata::rbd
