#include "clone_ops.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "strata/frontend_client.h"

namespace strata::rbd {

int read_parent_object(const ParentObject &parent, uint64_t off, uint64_t len, char *out) {
  std::memset(out, 0, len);
  if (off >= parent.bytes) return 0;
  const uint64_t n = std::min(len, parent.bytes - off);
  return read_snapshot_object(parent.obj, parent.snap_id, off, n, out);
}

int copy_up_and_mutate(const ObjectRef &child, const ParentObject &parent,
                       const ObjectMutation &m, bool *copied) {
  const strata_client_api *strata_api = child.api;
  const std::string oid = format::data_oid(child.image_id, child.objno);
  *copied = false;
  for (int attempt = 0; attempt < 10; ++attempt) {
    strata_obj_stat st{};
    st.struct_size = sizeof st;
    int rc = strata_stat(child.io, oid.c_str(), &st);
    if (rc == 0) {
      // Already the child's own: the change goes as it is.
      bool ignored = false;
      return mutate_preserving(child, 0, m, &ignored);
    }
    if (rc != -ENOENT) return rc;
    std::vector<char> data(parent.bytes);
    rc = read_parent_object(parent, 0, data.size(), data.data());
    if (rc < 0) return rc;
    strata_write_op_t op = strata_write_op_new();
    if (!op) return -ENOMEM;
    strata_write_op_create(op, 1);
    // Even an all-zero parent object is copied up as an (empty) object:
    // the child object's existence is what stops reading through.
    const bool zeros = std::all_of(data.begin(), data.end(), [](char c) { return c == 0; });
    if (!zeros) strata_write_op_write_full(op, data.data(), data.size());
    add_object_mutation(strata_api, op, m);
    rc = strata_write_op_operate(op, child.io, oid.c_str(), nullptr);
    strata_write_op_release(op);
    if (rc == -EEXIST) continue;  // created meanwhile: change it as it is
    if (rc == 0) *copied = true;
    return rc;
  }
  return -EAGAIN;
}

void adjust_snap_children(const ImageRef &parent, const std::string &parent_id, uint64_t snap_id,
                          int delta) {
  const strata_client_api *strata_api = parent.api;
  for (int attempt = 0; attempt < 50; ++attempt) {
    const Header h = read_header(parent, parent_id);
    auto it = h.snaps.find(snap_id);
    if (it == h.snaps.end()) fail(-ENOENT, parent, "no snapshot " + std::to_string(snap_id) + " of");
    SnapInfo s = it->second;
    const int64_t children = static_cast<int64_t>(s.children) + delta;
    s.children = static_cast<uint32_t>(std::max<int64_t>(children, 0));
    const std::string key = format::snap_key(snap_id), rec = format::encode_snap(s);
    strata_bytes k{key.data(), key.size()}, v{rec.data(), rec.size()};
    strata_write_op_t op = strata_write_op_new();
    strata_write_op_assert_version(op, h.version);
    strata_write_op_omap_set(op, &k, &v, 1);
    const int rc =
        strata_write_op_operate(op, parent.io, format::header_oid(parent_id).c_str(), nullptr);
    strata_write_op_release(op);
    if (rc == -ERANGE) continue;  // the header changed (a lock renewal): again
    check_rc(rc, parent, "updating the clone count of snapshot " + s.name + " of");
    return;
  }
  fail(-EAGAIN, parent, "the header kept changing while counting clones of");
}

}  // namespace strata::rbd
