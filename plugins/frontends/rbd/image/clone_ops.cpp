#include "clone_ops.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "image_format.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {
// Deeper chains than this are refused: a loop in the records, not a design.
constexpr size_t kMaxParentDepth = 64;
}  // namespace

strata_ioctx_t pool_io(const ImageRef &ref, const std::string &pool, const PoolResolver &pools) {
  if (pool == ref.pool) return ref.io;
  const ImageRef pref{ref.api, ref.io, pool, "(parent of " + ref.name + ")"};
  if (!pools) fail(-EOPNOTSUPP, pref, "no access to another pool from here: pool");
  strata_ioctx_t io = nullptr;
  check_rc(pools(pool, &io), pref, "opening the pool of");
  return io;
}

std::shared_ptr<const ParentChain> load_parent_chain(const ImageRef &ref, const ParentSpec &p,
                                                     const PoolResolver &pools) {
  auto chain = std::make_shared<ParentChain>();
  ParentSpec cur = p;
  for (;;) {
    const ImageRef pref{ref.api, pool_io(ref, cur.pool, pools), cur.pool, cur.image};
    if (chain->size() == kMaxParentDepth)
      fail(-ELOOP, ref, "more than " + std::to_string(kMaxParentDepth) + " parents above");
    const Header h = read_header(pref, cur.image_id);
    auto s = h.snaps.find(cur.snap_id);
    if (s == h.snaps.end())
      fail(-ENOENT, pref, "no snapshot " + cur.snap_name + " (parent of " + ref.name + ") of");
    const uint64_t below = h.parent ? s->second.parent_overlap : 0;
    chain->push_back({pref.io, cur.image_id, cur.snap_id, below});
    if (chain->back().overlap == 0) break;
    cur = *h.parent;
  }
  return chain;
}

int read_parent_object(const ParentObject &parent, uint64_t off, uint64_t len, char *out) {
  std::memset(out, 0, len);
  const uint64_t start = parent.objno * parent.object_size;
  uint64_t bytes = parent.bytes;
  for (const ParentLevel &level : *parent.chain) {
    if (off >= bytes) return 0;
    const uint64_t n = std::min(len, bytes - off);
    const int rc = read_object_at({parent.api, level.io, level.image_id, parent.objno},
                                  level.snap_id, off, n, out);
    if (rc != -ENOENT) return rc;
    // Missing at that snapshot: then it read on through that image's own
    // parent, within that snapshot's overlap.
    std::memset(out, 0, len);
    bytes = level.overlap > start ? std::min(bytes, level.overlap - start) : 0;
  }
  return 0;
}

int copy_up_and_mutate(const ObjectRef &child, uint64_t snap_seq, const ParentObject &parent,
                       const ObjectMutation &m, bool *copied) {
  const strata_client_api *strata_api = child.api;
  const std::string oid = format::data_oid(child.image_id, child.objno);
  *copied = false;
  for (int attempt = 0; attempt < 10; ++attempt) {
    strata_obj_stat st{};
    st.struct_size = sizeof st;
    int rc = strata_stat(child.io, oid.c_str(), &st);
    if (rc == 0) return mutate_object(child, snap_seq, m);  // the child's own already
    if (rc != -ENOENT) return rc;
    // A change that replaces the whole object needs none of the parent's data.
    const bool replaces = m.kind == ObjectMutation::Kind::kWriteFull ||
                          (m.kind == ObjectMutation::Kind::kTruncate && m.len == 0);
    std::vector<char> data(replaces ? 0 : parent.bytes);
    if (!data.empty()) {
      rc = read_parent_object(parent, 0, data.size(), data.data());
      if (rc < 0) return rc;
    }
    strata_write_op_t op = strata_write_op_new();
    if (!op) return -ENOMEM;
    // With snapshots of the child, the OSD records the object as absent
    // for them: their reads go on through to the parent, as before.
    if (snap_seq) strata_write_op_snap_context(op, snap_seq);
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

void drop_parent_link(const ImageRef &ref, const std::string &id, const ParentSpec &parent,
                      const std::string &lock_value, const PoolResolver &pools) {
  const strata_client_api *strata_api = ref.api;
  strata_bytes k{format::kParent, std::strlen(format::kParent)};
  strata_write_op_t op = strata_write_op_new();
  if (!lock_value.empty())
    strata_write_op_cmpxattr(op, format::kLockXattr, STRATA_CMP_EQ, lock_value.data(),
                             lock_value.size());
  strata_write_op_omap_rm_keys(op, &k, 1);
  const int rc = strata_write_op_operate(op, ref.io, format::header_oid(id).c_str(), nullptr);
  strata_write_op_release(op);
  if (rc == -ECANCELED) fail(-EBUSY, ref, "lost the lock while dropping the parent link of");
  check_rc(rc, ref, "dropping the parent link of");
  release_parent_snap(ref, parent, pools);
}

void release_parent_snap(const ImageRef &ref, const ParentSpec &parent, const PoolResolver &pools) {
  try {
    const ImageRef pref{ref.api, pool_io(ref, parent.pool, pools), parent.pool, parent.image};
    adjust_snap_children(pref, parent.image_id, parent.snap_id, -1);
  } catch (const sdk::Error &e) {
    if (e.code() != -ENOENT) throw;  // the parent is gone: nothing to count
  }
}

}  // namespace strata::rbd
