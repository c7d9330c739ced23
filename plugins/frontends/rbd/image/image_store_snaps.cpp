// The snapshot calls: create (directly or through the lock holder),
// remove, rollback.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "clone_ops.h"
#include "image.h"
#include "image_header.h"
#include "object_cow.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {
constexpr auto kSnapRequestWait = std::chrono::seconds(30);
}  // namespace

SnapInfo ImageStore::snap_create(const std::string &name, const std::string &snap) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  check_name(ref, snap, "snapshot name");
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  if (h.find_snap(snap)) fail(-EEXIST, ref, "snapshot " + snap + " exists in");
  if (h.parent) fail(-EOPNOTSUPP, ref, "snapshots of a clone are not yet supported (flatten it first):");
  if (!h.locked_live(format::now_realtime_ns())) {
    ScopedAdminLock lock(ref, id, "snap create");
    return add_snapshot_record(ref, id, lock.value(), snap);
  }
  // A live writer holds the image: ask it, so the snapshot is a point in
  // time between its writes (it polls its header for requests).
  const std::string hoid = format::header_oid(id);
  const std::string rkey = format::kSnapRequestPrefix + snap;
  strata_bytes k{rkey.data(), rkey.size()}, v{"", 0};
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_assert_exists(op);
  strata_write_op_omap_set(op, &k, &v, 1);
  int rc = strata_write_op_operate(op, io_, hoid.c_str(), nullptr);
  strata_write_op_release(op);
  check_rc(rc, ref, "asking the lock holder for snapshot " + snap + " of");
  const auto deadline = std::chrono::steady_clock::now() + kSnapRequestWait;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const Header now = read_header(ref, id);
    const bool pending =
        std::find(now.snap_requests.begin(), now.snap_requests.end(), snap) !=
        now.snap_requests.end();
    if (pending) continue;
    if (const SnapInfo *s = now.find_snap(snap)) return *s;
    fail(-EIO, ref, "the lock holder dropped the request for snapshot " + snap + " of");
  }
  (void)strata_omap_rm_keys(io_, hoid.c_str(), &k, 1);
  fail(-ETIMEDOUT, ref, "the lock holder did not take snapshot " + snap + " within 30 s for");
}

void ImageStore::snap_remove(const std::string &name, const std::string &snap) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  const SnapInfo *s = h.find_snap(snap);
  if (!s) fail(-ENOENT, ref, "no snapshot " + snap + " of");
  if (s->children > 0)
    fail(-EBUSY, ref, "snapshot " + snap + " has " + std::to_string(s->children) + " clone(s):");
  const uint64_t gone = s->id;
  // Drop the preserved states no remaining snapshot reads: a snapshot r
  // reads the smallest clone id >= r.
  for (uint64_t n = 0; n < h.max_objects(); ++n) {
    const std::string oid = format::data_oid(id, n);
    int rc = 0;
    auto clones = list_clones(ref, oid, &rc);
    if (rc == -ENOENT) continue;
    check_rc(rc, ref, "reading data object " + oid + " of");
    std::set<uint64_t> needed;
    for (const auto &[rid, rs] : h.snaps) {
      if (rid == gone) continue;
      auto c = clones.lower_bound(rid);
      if (c != clones.end()) needed.insert(c->first);
    }
    std::vector<std::string> drop;
    for (const auto &[cid, value] : clones) {
      if (needed.count(cid)) continue;
      if (value != format::kCloneAbsent) {
        rc = strata_remove(io_, format::snap_copy_oid(id, n, cid).c_str());
        if (rc < 0 && rc != -ENOENT) check_rc(rc, ref, "removing a snapshot copy of " + oid + " of");
      }
      drop.push_back(format::clone_key(cid));
    }
    if (drop.empty()) continue;
    std::vector<strata_bytes> keys;
    for (const auto &d : drop) keys.push_back({d.data(), d.size()});
    rc = strata_omap_rm_keys(io_, oid.c_str(), keys.data(), keys.size());
    if (rc < 0 && rc != -ENOENT) check_rc(rc, ref, "trimming " + oid + " of");
  }
  const std::string key = format::snap_key(gone);
  strata_bytes k{key.data(), key.size()};
  check_rc(strata_omap_rm_keys(io_, format::header_oid(id).c_str(), &k, 1), ref,
           "removing the record of snapshot " + snap + " of");
}

void ImageStore::snap_rollback(const std::string &name, const std::string &snap) {
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  refuse_if_locked(ref, read_header(ref, id), "rollback");
  ScopedAdminLock lock(ref, id, "snap rollback");
  const Header h = read_header(ref, id);
  const SnapInfo *s = h.find_snap(snap);
  if (!s) fail(-ENOENT, ref, "no snapshot " + snap + " of");
  const uint64_t n = std::max(h.objects_for(h.size), h.objects_for(s->size));
  std::vector<char> buf(h.object_size);
  for (uint64_t i = 0; i < n; ++i) {
    const ObjectRef obj{api_, io_, id, i};
    const uint64_t start = i * h.object_size;
    const uint64_t want = start >= s->size ? 0 : std::min<uint64_t>(h.object_size, s->size - start);
    if (want) check_rc(read_snapshot_object(obj, s->id, 0, want, buf.data()), ref,
                       "reading snapshot " + snap + " of");
    const bool all_zero = std::all_of(buf.begin(), buf.begin() + want, [](char c) { return c == 0; });
    // Through the copy-on-write path, so newer snapshots keep their data.
    ObjectMutation m = all_zero ? ObjectMutation{ObjectMutation::Kind::kTruncate, nullptr, 0, 0}
                                : ObjectMutation{ObjectMutation::Kind::kWriteFull, buf.data(), 0, want};
    bool copied = false;
    check_rc(mutate_preserving(obj, h.snap_seq, m, &copied), ref,
             "rolling back data object " + std::to_string(i) + " of");
  }
  set_header_keys(ref, id, lock.value(), {{format::kSize, format::encode_u64(s->size)}});
}

}  // namespace strata::rbd
