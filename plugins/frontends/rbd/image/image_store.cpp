// The administrative calls on whole images: create, list, info, rename,
// resize, remove, du (snapshots: image_store_snaps.cpp, clones:
// image_store_clones.cpp).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "aio_fanout.h"
#include "clone_ops.h"
#include "image.h"
#include "image_header.h"
#include "object_ops.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {

bool is_power_of_two(uint64_t v) { return v && (v & (v - 1)) == 0; }

// The directory entries among `keys` and the directory's version (0 when
// it does not exist yet).
std::map<std::string, std::string> read_directory_keys(const ImageRef &ref,
                                                       const std::vector<std::string> &keys,
                                                       uint64_t *version) {
  const strata_client_api *strata_api = ref.api;
  std::vector<strata_bytes> kb;
  for (const auto &k : keys) kb.push_back({k.data(), k.size()});
  strata_read_op_t op = strata_read_op_new();
  strata_omap_iter_t it = nullptr;
  int prval = 0;
  strata_read_op_omap_get_keys(op, kb.data(), kb.size(), &it, &prval);
  *version = 0;
  const int rc = strata_read_op_operate(op, ref.io, format::kDirectory, version);
  strata_read_op_release(op);
  std::map<std::string, std::string> out;
  if (rc == -ENOENT) {
    if (it) strata_omap_iter_end(it);
    *version = 0;
    return out;
  }
  if (rc < 0 && it) strata_omap_iter_end(it);
  check_rc(rc, ref, "reading the image directory for");
  const void *kp, *vp;
  size_t kl, vl;
  while (strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1)
    out[std::string(static_cast<const char *>(kp), kl)] =
        std::string(static_cast<const char *>(vp), vl);
  strata_omap_iter_end(it);
  return out;
}

// Removes objects first..last-1 of the image in parallel; missing ones are
// fine. With snapshots (snap_seq > 0) each remove carries the context: the
// OSD keeps the object's clone, which outlives the object.
void remove_objects(const ImageRef &ref, const std::string &id, uint64_t first, uint64_t last,
                    uint64_t snap_seq) {
  const strata_client_api *strata_api = ref.api;
  for_each_object_op(ref, id, first, last, "removing", [&](uint64_t, strata_write_op_t op) {
    if (snap_seq) strata_write_op_snap_context(op, snap_seq);
    strata_write_op_remove(op);
  });
}

// How many bytes each object served snapshot snap_id with, from its snap
// set: the clone serving it, or nullopt when the object as it is does (no
// clone at or after snap_id; a missing object without a snap set too).
std::vector<std::optional<uint64_t>> snapshot_object_sizes(const ImageRef &ref,
                                                           const std::string &id, uint64_t n,
                                                           uint64_t snap_id) {
  const strata_client_api *strata_api = ref.api;
  constexpr size_t kRoom = 64;  // clones per object; more: read again with room
  struct Listing {
    strata_read_op_t op = nullptr;
    uint64_t seq = 0;
    std::vector<strata_snap_clone> clones;
    size_t count = 0;
    int prval = 0;
  };
  std::vector<Listing> lists(n);
  std::vector<std::string> oids(n);
  for (uint64_t i = 0; i < n; ++i) oids[i] = format::data_oid(id, i);
  auto list = [&](Listing &l, size_t room) {
    l.clones.assign(room, strata_snap_clone{});
    l.op = strata_read_op_new();
    if (!l.op) return -ENOMEM;
    strata_read_op_list_snaps(l.op, &l.seq, l.clones.data(), room, &l.count, &l.prval);
    return 0;
  };
  // The read ops must live until their completions: released after the fan-out.
  auto results = run_fanout(ref.api, n, kAdminFanout, [&](size_t i, strata_completion_t c) {
    if (const int rc = list(lists[i], kRoom); rc < 0) return rc;
    return strata_aio_read_op_operate(lists[i].op, ref.io, oids[i].c_str(), c);
  });
  std::vector<std::optional<uint64_t>> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    Listing &l = lists[i];
    int64_t rc = results[i];
    if (rc == 0 && l.count > kRoom) {  // rare: many clones of one object
      strata_read_op_release(l.op);
      rc = list(l, l.count);
      if (rc == 0) rc = strata_read_op_operate(l.op, ref.io, oids[i].c_str(), nullptr);
    }
    if (l.op) strata_read_op_release(l.op);
    if (rc < 0) check_rc(rc, ref, "listing the snapshots of data object " + oids[i] + " of");
    for (size_t k = 0; k < std::min(l.count, l.clones.size()); ++k) {
      // Clones come oldest first; the first at or after snap_id serves it.
      if (l.clones[k].id < snap_id) continue;
      out[i] = l.clones[k].exists ? l.clones[k].size : 0;
      break;
    }
  }
  return out;
}

}  // namespace

ImageStore::ImageStore(const strata_client_api *api, strata_ioctx_t io, std::string pool_name,
                       strata_cluster_t cluster)
    : api_(api), io_(io), pool_(std::move(pool_name)), cluster_(cluster) {}

ImageStore::~ImageStore() {
  const strata_client_api *strata_api = api_;
  for (auto &[pool, io] : other_pools_) strata_ioctx_destroy(io);
}

int ImageStore::pool_ioctx(const std::string &pool, strata_ioctx_t *out) {
  const strata_client_api *strata_api = api_;
  if (pool == pool_) {
    *out = io_;
    return 0;
  }
  if (!cluster_) return -EOPNOTSUPP;
  std::lock_guard lk(m_);
  auto it = other_pools_.find(pool);
  if (it == other_pools_.end()) {
    strata_ioctx_t io = nullptr;
    const int rc = strata_ioctx_create(cluster_, pool.c_str(), &io);
    if (rc < 0) return rc;
    it = other_pools_.emplace(pool, io).first;
  }
  *out = it->second;
  return 0;
}

const std::string &ImageStore::pool() const { return pool_; }
const strata_client_api *ImageStore::api() const { return api_; }
strata_ioctx_t ImageStore::ioctx() const { return io_; }

void ImageStore::create(const std::string &name, const CreateOptions &opts) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  check_name(ref, name, "image name");
  if (!is_power_of_two(opts.object_size) || opts.object_size < kMinObjectSize ||
      opts.object_size > kMaxObjectSize)
    fail(-EINVAL, ref, "object size " + std::to_string(opts.object_size) +
                           " is not a power of two in [4 KiB, 32 MiB] for");
  // The header first, created exclusively under a fresh id...
  const std::string id = format::random_id();
  const std::string hoid = format::header_oid(id);
  {
    const std::string size = format::encode_u64(opts.size);
    const std::string osz = format::encode_u64(opts.object_size);
    const std::string created = format::encode_u64(format::now_realtime_ns());
    const std::string zero = "0";
    strata_bytes keys[4] = {{format::kSize, std::strlen(format::kSize)},
                            {format::kObjectSize, std::strlen(format::kObjectSize)},
                            {format::kCreated, std::strlen(format::kCreated)},
                            {format::kSnapSeq, std::strlen(format::kSnapSeq)}};
    strata_bytes vals[4] = {{size.data(), size.size()},
                            {osz.data(), osz.size()},
                            {created.data(), created.size()},
                            {zero.data(), zero.size()}};
    strata_write_op_t op = strata_write_op_new();
    strata_write_op_create(op, 1);
    strata_write_op_omap_set(op, keys, vals, 4);
    strata_write_op_setxattr(op, format::kLockXattr, "", 0);
    const int rc = strata_write_op_operate(op, io_, hoid.c_str(), nullptr);
    strata_write_op_release(op);
    check_rc(rc, ref, "creating the header (" + hoid + ") of");
  }
  // ...then the directory entries, guarded by the directory's version so
  // that of two creates of one name only one gets in.
  const std::string nkey = format::dir_name_key(name), ikey = format::dir_id_key(id);
  for (int attempt = 0;; ++attempt) {
    uint64_t version = 0;
    auto existing = read_directory_keys(ref, {nkey}, &version);
    int rc = 0;
    if (!existing.empty()) {
      rc = -EEXIST;
    } else {
      strata_bytes keys[2] = {{nkey.data(), nkey.size()}, {ikey.data(), ikey.size()}};
      strata_bytes vals[2] = {{id.data(), id.size()}, {name.data(), name.size()}};
      strata_write_op_t op = strata_write_op_new();
      strata_write_op_assert_version(op, version);
      strata_write_op_omap_set(op, keys, vals, 2);
      rc = strata_write_op_operate(op, io_, format::kDirectory, nullptr);
      strata_write_op_release(op);
      if (rc == -ERANGE && attempt < 100) continue;
    }
    if (rc < 0) {
      (void)strata_remove(io_, hoid.c_str());
      if (rc == -EEXIST) fail(-EEXIST, ref, "image exists:");
      check_rc(rc, ref, "adding to the image directory");
    }
    return;
  }
}

std::vector<std::string> ImageStore::list() {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, "(listing)"};
  std::vector<std::string> names;
  std::string after = "name_";
  const std::string end = "name`";  // '`' follows '_': every "name_*" key
  for (;;) {
    strata_omap_iter_t it = nullptr;
    int rc = strata_omap_list(io_, format::kDirectory, after.data(), after.size(), end.data(),
                              end.size(), 1000, &it);
    if (rc == -ENOENT) break;
    check_rc(rc, ref, "listing the images of");
    const void *kp, *vp;
    size_t kl, vl;
    while (strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1) {
      after.assign(static_cast<const char *>(kp), kl);
      names.push_back(after.substr(5));
    }
    const bool more = strata_omap_iter_more(it) == 1;
    strata_omap_iter_end(it);
    if (!more) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

ImageInfo ImageStore::info(const std::string &name) {
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  ImageInfo info;
  info.pool = pool_;
  info.name = name;
  info.id = id;
  info.size = h.size;
  info.object_size = h.object_size;
  info.created_ns = h.created_ns;
  for (const auto &[sid, s] : h.snaps) info.snaps.push_back(s);
  info.parent = h.parent;
  if (h.lock && h.locked_live(format::now_realtime_ns())) {
    info.lock_owner = h.lock->owner + (h.lock->description.empty() ? "" : " " + h.lock->description);
    info.lock_expires_ns = h.lock->expires_ns;
  }
  return info;
}

void ImageStore::resize(const std::string &name, uint64_t new_size) {
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  refuse_if_locked(ref, read_header(ref, id), "resize");
  ScopedAdminLock lock(ref, id, "resize");
  const Header h = read_header(ref, id);
  if (new_size < h.size) {
    // With snapshots the removes and the truncate carry the context, so the
    // snapshots keep what they had.
    remove_objects(ref, id, h.objects_for(new_size), h.objects_for(h.size), h.snap_context());
    if (new_size % h.object_size) {
      const ObjectMutation m{ObjectMutation::Kind::kTruncate, nullptr, 0, new_size % h.object_size};
      const int rc = mutate_object({api_, io_, id, new_size / h.object_size}, h.snap_context(), m);
      if (rc != -ENOENT) check_rc(rc, ref, "truncating the last data object of");
    }
  }
  std::vector<std::pair<std::string, std::string>> kv = {{format::kSize, format::encode_u64(new_size)}};
  if (h.parent && new_size < h.parent->overlap) {
    // What a shrink cut off must not read through again after a grow.
    ParentSpec p = *h.parent;
    p.overlap = new_size;
    kv.emplace_back(format::kParent, format::encode_parent(p));
  }
  set_header_keys(ref, id, lock.value(), kv);
}

void ImageStore::remove(const std::string &name) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  const std::string hoid = format::header_oid(id);
  bool header_exists = true;
  try {
    const Header h = read_header(ref, id);
    if (!h.snaps.empty())
      fail(-ENOTEMPTY, ref, "image has " + std::to_string(h.snaps.size()) + " snapshot(s):");
    refuse_if_locked(ref, h, "remove");
  } catch (const sdk::Error &e) {
    if (e.code() != -ENOENT) throw;
    header_exists = false;  // a remove that stopped half way: finish it
  }
  if (header_exists) {
    ScopedAdminLock lock(ref, id, "remove");
    const Header h = read_header(ref, id);
    remove_objects(ref, id, 0, h.max_objects(), 0);  // (no snapshots: refused above)
    if (h.parent) release_parent_snap(ref, *h.parent, pools_of(*this));
    const int rc = strata_remove(io_, hoid.c_str());
    if (rc < 0 && rc != -ENOENT) check_rc(rc, ref, "removing the header of");
  }
  // The directory entries last: until they go, `remove` can be run again.
  const std::string nkey = format::dir_name_key(name), ikey = format::dir_id_key(id);
  strata_bytes keys[2] = {{nkey.data(), nkey.size()}, {ikey.data(), ikey.size()}};
  const int rc = strata_omap_rm_keys(io_, format::kDirectory, keys, 2);
  if (rc < 0 && rc != -ENOENT) check_rc(rc, ref, "removing the directory entries of");
}

void ImageStore::rename(const std::string &from, const std::string &to) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, from};
  check_name(ref, to, "new image name");
  const std::string fkey = format::dir_name_key(from), tkey = format::dir_name_key(to);
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t version = 0;
    auto entries = read_directory_keys(ref, {fkey, tkey}, &version);
    if (!entries.count(fkey)) fail(-ENOENT, ref, "no image");
    if (entries.count(tkey)) fail(-EEXIST, ImageRef{api_, io_, pool_, to}, "image exists:");
    const std::string id = entries[fkey], ikey = format::dir_id_key(id);
    strata_bytes rm{fkey.data(), fkey.size()};
    strata_bytes keys[2] = {{tkey.data(), tkey.size()}, {ikey.data(), ikey.size()}};
    strata_bytes vals[2] = {{id.data(), id.size()}, {to.data(), to.size()}};
    strata_write_op_t op = strata_write_op_new();
    strata_write_op_assert_version(op, version);
    strata_write_op_omap_rm_keys(op, &rm, 1);
    strata_write_op_omap_set(op, keys, vals, 2);
    const int rc = strata_write_op_operate(op, io_, format::kDirectory, nullptr);
    strata_write_op_release(op);
    if (rc == -ERANGE) continue;
    check_rc(rc, ref, "renaming to " + to);
    return;
  }
  fail(-EAGAIN, ref, "the directory kept changing while renaming");
}

uint64_t ImageStore::du(const std::string &name, const std::string &snap) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  uint64_t snap_id = 0, bytes = h.size;
  if (!snap.empty()) {
    const SnapInfo *s = h.find_snap(snap);
    if (!s) fail(-ENOENT, ref, "no snapshot " + snap + " of");
    snap_id = s->id;
    bytes = s->size;
  }
  const uint64_t n = h.objects_for(bytes);
  uint64_t total = 0;
  // A snapshot: what the clones serving it held; the objects that did not
  // change since count as they are.
  std::vector<std::optional<uint64_t>> sizes(n);
  if (snap_id) sizes = snapshot_object_sizes(ref, id, n, snap_id);
  std::vector<strata_obj_stat> stats(n);
  std::vector<std::string> oids(n);
  for (uint64_t i = 0; i < n; ++i) oids[i] = format::data_oid(id, i);
  auto results = run_fanout(api_, n, kAdminFanout, [&](size_t i, strata_completion_t c) {
    if (sizes[i]) return -ENOENT;  // known already
    stats[i].struct_size = sizeof stats[i];
    return strata_aio_stat(io_, oids[i].c_str(), c, &stats[i]);
  });
  for (uint64_t i = 0; i < n; ++i) {
    if (sizes[i]) {
      total += *sizes[i];
      continue;
    }
    if (results[i] == -ENOENT) continue;
    check_rc(results[i], ref, "stat of data object " + oids[i] + " of");
    total += stats[i].size;
  }
  return total;
}

}  // namespace strata::rbd
