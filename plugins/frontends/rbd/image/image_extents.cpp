// Which parts of an open image hold data (NBD block status).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "aio_fanout.h"
#include "open_image.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {
constexpr uint64_t kExtentObjectsMax = 256;  // objects one extents() call looks at
}  // namespace

int OpenImage::extents(uint64_t off, uint64_t len, std::vector<Extent> *out) {
  out->clear();
  if (len == 0 || off + len > size_) return -EINVAL;
  // Changes answered early show once they have landed.
  write_back_.wait_clear(off, len);
  const uint64_t first = off / object_size_;
  const uint64_t last = std::min((off + len - 1) / object_size_, first + kExtentObjectsMax - 1);
  const uint64_t n = last - first + 1;
  std::vector<bool> exists(n, true);
  if (snap_id_ == 0) {
    // A snapshot's objects are not simply there or not: report data.
    std::vector<strata_obj_stat> st(n);
    std::vector<std::string> oids(n);
    for (uint64_t i = 0; i < n; ++i) oids[i] = format::data_oid(info_.id, first + i);
    auto results = run_fanout(strata_api, n, 64, [&](size_t i, strata_completion_t c) {
      st[i].struct_size = sizeof st[i];
      return strata_aio_stat(io_, oids[i].c_str(), c, &st[i]);
    });
    for (uint64_t i = 0; i < n; ++i) {
      if (results[i] == -ENOENT) {
        exists[i] = false;
      } else if (results[i] < 0) {
        note_error(static_cast<int>(results[i]), "extents: stat of " + oids[i]);
        return static_cast<int>(results[i]);
      }
    }
  }
  const uint64_t end = std::min(off + len, (last + 1) * object_size_);
  for (uint64_t pos = off; pos < end;) {
    const uint64_t objno = pos / object_size_;
    const uint64_t next = std::min(end, (objno + 1) * object_size_);
    // A clone's missing object within the overlap reads its parent's data.
    const bool hole = !exists[objno - first] && !parent_object(objno);
    if (!out->empty() && out->back().hole == hole)
      out->back().length += next - pos;
    else
      out->push_back({pos, next - pos, hole, hole});
    pos = next;
  }
  return 0;
}

}  // namespace strata::rbd
