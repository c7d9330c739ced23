// The snapshot calls: create (directly or through the lock holder),
// remove, rollback. The data side is the OSDs' object snapshots: every
// change carries the image's snap_seq as its snapshot context (image.cpp),
// removal trims, rollback rolls each object back.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "clone_ops.h"
#include "image.h"
#include "image_header.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {

constexpr auto kSnapRequestWait = std::chrono::seconds(30);

// Leaves a request (an empty header omap key) for the lock holder, which
// polls for them.
void post_holder_request(const ImageRef &ref, const std::string &id, const std::string &key,
                         const std::string &what) {
  const strata_client_api *strata_api = ref.api;
  strata_bytes k{key.data(), key.size()}, v{"", 0};
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_assert_exists(op);
  strata_write_op_omap_set(op, &k, &v, 1);
  int rc = strata_write_op_operate(op, ref.io, format::header_oid(id).c_str(), nullptr);
  strata_write_op_release(op);
  check_rc(rc, ref, "asking the lock holder " + what + " of");
}

// A live writer holds the image: it stops naming the snapshot in its
// writes' context (pausing them while it switches) before the clones go.
void ask_holder_to_drop(const ImageRef &ref, const std::string &id, const std::string &snap) {
  const strata_client_api *strata_api = ref.api;
  const std::string hoid = format::header_oid(id);
  const std::string rkey = format::kSnapRemoveRequestPrefix + snap;
  strata_bytes k{rkey.data(), rkey.size()};
  post_holder_request(ref, id, rkey, "to drop snapshot " + snap);
  const auto deadline = std::chrono::steady_clock::now() + kSnapRequestWait;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto pending = list_snap_remove_requests(ref, id);
    if (std::find(pending.begin(), pending.end(), snap) == pending.end()) return;
    // A holder that died meanwhile answers nothing; its writes stopped.
    if (!read_header(ref, id).locked_live(format::now_realtime_ns())) break;
  }
  (void)strata_omap_rm_keys(ref.io, hoid.c_str(), &k, 1);
  if (read_header(ref, id).locked_live(format::now_realtime_ns()))
    fail(-ETIMEDOUT, ref, "the lock holder did not drop snapshot " + snap + " within 30 s for");
}

}  // namespace

SnapInfo ImageStore::snap_create(const std::string &name, const std::string &snap) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  check_name(ref, snap, "snapshot name");
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  if (h.find_snap(snap)) fail(-EEXIST, ref, "snapshot " + snap + " exists in");
  if (!h.locked_live(format::now_realtime_ns())) {
    ScopedAdminLock lock(ref, id, "snap create");
    return add_snapshot_record(ref, id, lock.value(), snap);
  }
  // A live writer holds the image: ask it, so the snapshot is a point in
  // time between its writes (it polls its header for requests).
  const std::string hoid = format::header_oid(id);
  const std::string rkey = format::kSnapRequestPrefix + snap;
  strata_bytes k{rkey.data(), rkey.size()};
  post_holder_request(ref, id, rkey, "for snapshot " + snap);
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
  if (h.locked_live(format::now_realtime_ns())) ask_holder_to_drop(ref, id, snap);
  // The record goes first: an image opened from now on leaves the snapshot
  // out of its context, so no write makes a clone for it after the trim.
  const std::string key = format::snap_key(gone);
  strata_bytes k{key.data(), key.size()};
  check_rc(strata_omap_rm_keys(io_, format::header_oid(id).c_str(), &k, 1), ref,
           "removing the record of snapshot " + snap + " of");
  // The OSDs drop the clones only this snapshot was served by.
  std::vector<uint64_t> keep;
  bool parent_needed = h.parent && std::min(h.parent->overlap, h.size) > 0;
  for (const auto &[rid, rs] : h.snaps) {
    if (rid == gone) continue;
    keep.push_back(rid);
    if (rs.parent_overlap > 0) parent_needed = true;
  }
  for_each_object_op(ref, id, 0, h.max_objects(), "trimming snapshot " + snap,
                     [&](uint64_t, strata_write_op_t op) {
                       strata_write_op_snap_trim(op, keep.data(), keep.size());
                     });
  // A flattened clone keeps its parent link for the snapshots that read
  // through it; the last of them takes the link along.
  if (h.parent && !parent_needed) drop_parent_link(ref, id, *h.parent, "", pools_of(*this));
}

void ImageStore::snap_rollback(const std::string &name, const std::string &snap) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  refuse_if_locked(ref, read_header(ref, id), "rollback");
  ScopedAdminLock lock(ref, id, "snap rollback");
  const Header h = read_header(ref, id);
  const SnapInfo *s = h.find_snap(snap);
  if (!s) fail(-ENOENT, ref, "no snapshot " + snap + " of");
  const uint64_t n = std::max(h.objects_for(h.size), h.objects_for(s->size));
  const uint64_t seq = h.snap_context(), snap_id = s->id;
  // Each object becomes the clone serving the snapshot (or goes, if it did
  // not exist then); the context first keeps its current content for the
  // snapshots after that one.
  for_each_object_op(ref, id, 0, n, "rolling back to snapshot " + snap,
                     [&](uint64_t, strata_write_op_t op) {
                       strata_write_op_snap_context(op, seq);
                       strata_write_op_snap_rollback(op, snap_id);
                     });
  std::vector<std::pair<std::string, std::string>> kv = {
      {format::kSize, format::encode_u64(s->size)}};
  if (h.parent) {
    // The objects the snapshot read through to the parent are gone again:
    // they read through as far as they did then.
    ParentSpec p = *h.parent;
    p.overlap = s->parent_overlap;
    kv.emplace_back(format::kParent, format::encode_parent(p));
  }
  set_header_keys(ref, id, lock.value(), kv);
}

}  // namespace strata::rbd
