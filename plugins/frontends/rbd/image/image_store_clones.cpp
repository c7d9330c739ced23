// Clones of a snapshot and flattening them (clone_ops.h).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "clone_ops.h"
#include "image.h"
#include "image_header.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

void ImageStore::clone(const std::string &name, const std::string &snap, ImageStore &child_store,
                       const std::string &child, const CreateOptions &opts_or_zero) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  const SnapInfo *s = h.find_snap(snap);
  if (!s) fail(-ENOENT, ref, "no snapshot " + snap + " of");
  const uint64_t size = opts_or_zero.size ? opts_or_zero.size : s->size;
  // Count the child first: a snapshot with a child being made is not removed.
  adjust_snap_children(ref, id, s->id, +1);
  try {
    child_store.create(child, {size, h.object_size});
  } catch (...) {
    adjust_snap_children(ref, id, s->id, -1);
    throw;
  }
  const ImageRef cref{api_, child_store.ioctx(), child_store.pool(), child};
  const std::string cid = lookup_image_id(cref);
  ParentSpec p;
  p.pool = pool_;
  p.image = name;
  p.image_id = id;
  p.snap_id = s->id;
  p.snap_name = snap;
  p.overlap = std::min(size, s->size);
  const std::string value = format::encode_parent(p);
  strata_bytes k{format::kParent, std::strlen(format::kParent)}, v{value.data(), value.size()};
  check_rc(strata_omap_set(child_store.ioctx(), format::header_oid(cid).c_str(), &k, &v, 1), cref,
           "linking the clone to " + name + "@" + snap + ":");
}

void ImageStore::flatten(const std::string &name) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  Header h = read_header(ref, id);
  if (!h.parent || h.parent->overlap == 0)
    fail(-EINVAL, ref, "not a clone (or flattened already):");
  refuse_if_locked(ref, h, "flatten");
  ScopedAdminLock lock(ref, id, "flatten");
  h = read_header(ref, id);
  const ParentSpec parent = *h.parent;
  const uint64_t covered = std::min(parent.overlap, h.size);
  const auto chain = load_parent_chain(ref, parent, pools_of(*this));
  // Copy up every object that still reads through (with the image's
  // snapshot context: its snapshots record the object as absent, so they
  // keep reading through the link they keep).
  for (uint64_t n = 0; n < h.objects_for(covered); ++n) {
    const std::string oid = format::data_oid(id, n);
    strata_obj_stat st{};
    st.struct_size = sizeof st;
    int rc = strata_stat(io_, oid.c_str(), &st);
    if (rc == 0) continue;
    if (rc != -ENOENT) check_rc(rc, ref, "stat of " + oid + " of");
    const ParentObject po{api_, chain, h.object_size, n,
                          std::min<uint64_t>(h.object_size, covered - n * h.object_size)};
    std::vector<char> data(po.bytes);
    check_rc(read_parent_object(po, 0, data.size(), data.data()), ref,
             "reading the parent's data for " + oid + " of");
    // All zeros: the head reads zeros anyway once it no longer reads through.
    if (std::all_of(data.begin(), data.end(), [](char c) { return c == 0; })) continue;
    strata_write_op_t op = strata_write_op_new();
    if (h.snap_context()) strata_write_op_snap_context(op, h.snap_context());
    strata_write_op_create(op, 1);
    strata_write_op_write_full(op, data.data(), data.size());
    rc = strata_write_op_operate(op, io_, oid.c_str(), nullptr);
    strata_write_op_release(op);
    if (rc != -EEXIST) check_rc(rc, ref, "copying up " + oid + " of");
  }
  const bool snaps_read_through = std::any_of(
      h.snaps.begin(), h.snaps.end(), [](const auto &e) { return e.second.parent_overlap > 0; });
  if (!snaps_read_through) {
    drop_parent_link(ref, id, parent, lock.value(), pools_of(*this));
    return;
  }
  // The head reads nothing through any more; the snapshots still do.
  ParentSpec p = parent;
  p.overlap = 0;
  set_header_keys(ref, id, lock.value(), {{format::kParent, format::encode_parent(p)}});
}

}  // namespace strata::rbd
