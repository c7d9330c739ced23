// The administrative calls: create, list, info, rename, resize, remove,
// du, and the snapshot calls.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "aio_fanout.h"
#include "clone_ops.h"
#include "image.h"
#include "image_header.h"
#include "object_cow.h"
#include "store_ops.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

namespace {

constexpr size_t kFanout = 32;  // object calls in flight for one administrative call
constexpr auto kSnapRequestWait = std::chrono::seconds(30);

void check_name(const ImageRef &ref, const std::string &name, const char *what) {
  const std::string why = format::name_problem(name);
  if (!why.empty()) throw sdk::Error(-EINVAL, std::string(what) + " in pool " + ref.pool +
                                                  ": " + why);
}

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

// Removes objects first..last-1 of the image in parallel; missing ones are fine.
void remove_objects(const ImageRef &ref, const std::string &id, uint64_t first, uint64_t last) {
  const strata_client_api *strata_api = ref.api;
  if (last <= first) return;
  std::vector<std::string> oids;
  for (uint64_t n = first; n < last; ++n) oids.push_back(format::data_oid(id, n));
  auto results = run_fanout(ref.api, oids.size(), kFanout, [&](size_t i, strata_completion_t c) {
    return strata_aio_remove(ref.io, oids[i].c_str(), c);
  });
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i] < 0 && results[i] != -ENOENT)
      check_rc(results[i], ref, "removing data object " + oids[i] + " of");
}

void set_header_keys(const ImageRef &ref, const std::string &id, const std::string &lock_value,
                     const std::vector<std::pair<std::string, std::string>> &kv) {
  const strata_client_api *strata_api = ref.api;
  std::vector<strata_bytes> keys, vals;
  for (const auto &[k, v] : kv) {
    keys.push_back({k.data(), k.size()});
    vals.push_back({v.data(), v.size()});
  }
  strata_write_op_t op = strata_write_op_new();
  strata_write_op_cmpxattr(op, format::kLockXattr, STRATA_CMP_EQ, lock_value.data(),
                           lock_value.size());
  strata_write_op_omap_set(op, keys.data(), vals.data(), keys.size());
  const int rc = strata_write_op_operate(op, ref.io, format::header_oid(id).c_str(), nullptr);
  strata_write_op_release(op);
  if (rc == -ECANCELED) fail(-EBUSY, ref, "lost the lock while updating the header of");
  check_rc(rc, ref, "updating the header of");
}

void refuse_if_locked(const ImageRef &ref, const Header &h, const std::string &what) {
  const uint64_t now = format::now_realtime_ns();
  if (h.locked_live(now))
    fail(-EBUSY, ref, what + ": image locked (" + describe_holder(*h.lock, now) + "):");
}

// Object numbers 0..n of `id` where snapshot-relevant keys (clone_*) live.
std::map<uint64_t, std::string> list_clones(const ImageRef &ref, const std::string &oid,
                                            int *rc_out) {
  const strata_client_api *strata_api = ref.api;
  std::map<uint64_t, std::string> out;
  const std::string first = format::kClonePrefix, end = "clone`";
  strata_omap_iter_t it = nullptr;
  *rc_out = strata_omap_list(ref.io, oid.c_str(), first.data(), first.size(), end.data(),
                             end.size(), 1000, &it);
  if (*rc_out < 0) return out;
  const void *kp, *vp;
  size_t kl, vl;
  while (strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1) {
    std::string_view key(static_cast<const char *>(kp), kl);
    if (auto id = format::parse_hex16(key.substr(first.size())))
      out[*id] = std::string(static_cast<const char *>(vp), vl);
  }
  strata_omap_iter_end(it);
  return out;
}

}  // namespace

ImageStore::ImageStore(const strata_client_api *api, strata_ioctx_t io, std::string pool_name)
    : api_(api), io_(io), pool_(std::move(pool_name)) {}

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
    const uint64_t keep = h.objects_for(new_size), had = h.objects_for(h.size);
    if (h.snap_seq == 0) {
      remove_objects(ref, id, keep, had);
    } else {
      // Snapshots may still need the data: preserve, then empty the head.
      for (uint64_t n = keep; n < had; ++n) {
        bool copied = false;
        ObjectMutation m{ObjectMutation::Kind::kTruncate, nullptr, 0, 0};
        check_rc(mutate_preserving({api_, io_, id, n}, h.snap_seq, m, &copied), ref,
                 "truncating data object " + std::to_string(n) + " of");
      }
    }
    if (new_size % h.object_size) {
      bool copied = false;
      ObjectMutation m{ObjectMutation::Kind::kTruncate, nullptr, 0, new_size % h.object_size};
      check_rc(mutate_preserving({api_, io_, id, new_size / h.object_size}, h.snap_seq, m,
                                 &copied),
               ref, "truncating the last data object of");
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
    remove_objects(ref, id, 0, h.max_objects());
    if (h.parent && h.parent->pool == pool_) {
      try {
        adjust_snap_children(ImageRef{api_, io_, pool_, h.parent->image}, h.parent->image_id,
                             h.parent->snap_id, -1);
      } catch (const sdk::Error &e) {
        if (e.code() != -ENOENT) throw;  // the parent is gone: nothing to count
      }
    }
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
  // Which object holds each object's data: the head, or for a snapshot
  // the copy its clone_ keys point to ("" = nothing).
  std::vector<std::string> oids(n);
  for (uint64_t i = 0; i < n; ++i) {
    oids[i] = format::data_oid(id, i);
    if (snap_id == 0) continue;
    int rc = 0;
    auto clones = list_clones(ref, oids[i], &rc);
    if (rc == -ENOENT) {
      oids[i].clear();
      continue;
    }
    check_rc(rc, ref, "reading data object " + oids[i] + " of");
    auto c = clones.lower_bound(snap_id);
    if (c == clones.end()) continue;
    oids[i] = c->second == format::kCloneAbsent ? "" : format::snap_copy_oid(id, i, c->first);
  }
  std::vector<strata_obj_stat> stats(n);
  auto results = run_fanout(api_, n, kFanout, [&](size_t i, strata_completion_t c) {
    if (oids[i].empty()) return -ENOENT;
    stats[i].struct_size = sizeof stats[i];
    return strata_aio_stat(io_, oids[i].c_str(), c, &stats[i]);
  });
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (results[i] == -ENOENT) continue;
    check_rc(results[i], ref, "stat of data object " + oids[i] + " of");
    total += stats[i].size;
  }
  return total;
}

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

void ImageStore::clone(const std::string &name, const std::string &snap, ImageStore &child_store,
                       const std::string &child, const CreateOptions &opts_or_zero) {
  const strata_client_api *strata_api = api_;
  const ImageRef ref{api_, io_, pool_, name};
  if (child_store.pool() != pool_)
    fail(-EOPNOTSUPP, ref, "clones into another pool (" + child_store.pool() + ") are not yet supported:");
  const std::string id = lookup_image_id(ref);
  const Header h = read_header(ref, id);
  const SnapInfo *s = h.find_snap(snap);
  if (!s) fail(-ENOENT, ref, "no snapshot " + snap + " of");
  if (h.parent) fail(-EOPNOTSUPP, ref, "clones of a clone are not yet supported:");
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
  if (!h.parent) fail(-EINVAL, ref, "not a clone:");
  if (h.parent->pool != pool_) fail(-EOPNOTSUPP, ref, "clones of another pool's image: not yet supported:");
  refuse_if_locked(ref, h, "flatten");
  ScopedAdminLock lock(ref, id, "flatten");
  h = read_header(ref, id);
  const ParentSpec parent = *h.parent;
  const uint64_t covered = std::min(parent.overlap, h.size);
  // Copy up every object that still reads through.
  for (uint64_t n = 0; n < h.objects_for(covered); ++n) {
    const std::string oid = format::data_oid(id, n);
    strata_obj_stat st{};
    st.struct_size = sizeof st;
    int rc = strata_stat(io_, oid.c_str(), &st);
    if (rc == 0) continue;
    if (rc != -ENOENT) check_rc(rc, ref, "stat of " + oid + " of");
    const ParentObject po{{api_, io_, parent.image_id, n}, parent.snap_id,
                          std::min<uint64_t>(h.object_size, covered - n * h.object_size)};
    std::vector<char> data(po.bytes);
    check_rc(read_parent_object(po, 0, data.size(), data.data()), ref,
             "reading the parent's data for " + oid + " of");
    if (std::all_of(data.begin(), data.end(), [](char c) { return c == 0; })) continue;
    strata_write_op_t op = strata_write_op_new();
    strata_write_op_create(op, 1);
    strata_write_op_write_full(op, data.data(), data.size());
    rc = strata_write_op_operate(op, io_, oid.c_str(), nullptr);
    strata_write_op_release(op);
    if (rc != -EEXIST) check_rc(rc, ref, "copying up " + oid + " of");
  }
  {
    const std::string lv = lock.value();
    strata_bytes k{format::kParent, std::strlen(format::kParent)};
    strata_write_op_t op = strata_write_op_new();
    strata_write_op_cmpxattr(op, format::kLockXattr, STRATA_CMP_EQ, lv.data(), lv.size());
    strata_write_op_omap_rm_keys(op, &k, 1);
    const int rc = strata_write_op_operate(op, io_, format::header_oid(id).c_str(), nullptr);
    strata_write_op_release(op);
    check_rc(rc, ref, "dropping the parent link of");
  }
  adjust_snap_children(ImageRef{api_, io_, pool_, parent.image}, parent.image_id, parent.snap_id, -1);
}

}  // namespace strata::rbd
