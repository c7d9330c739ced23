#include "image_header.h"

#include <cerrno>
#include <cstring>

#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace strata::rbd {

using sdk::Error;

const SnapInfo *Header::find_snap(const std::string &name) const {
  for (const auto &[id, s] : snaps)
    if (s.name == name) return &s;
  return nullptr;
}

uint64_t Header::max_objects() const {
  uint64_t bytes = size;
  for (const auto &[id, s] : snaps) bytes = std::max(bytes, s.size);
  return objects_for(bytes);
}

[[noreturn]] void fail(int rc, const ImageRef &ref, const std::string &what) {
  throw Error(rc, what + " " + ref.pool + "/" + ref.name + ": " + std::strerror(-rc));
}

void check_rc(int64_t rc, const ImageRef &ref, const std::string &what) {
  if (rc < 0) fail(static_cast<int>(rc), ref, what);
}

std::string describe_holder(const format::LockValue &l, uint64_t now_ns) {
  const uint64_t left_ms = l.expires_ns > now_ns ? (l.expires_ns - now_ns) / 1000000 : 0;
  std::string s = "held by " + l.owner;
  if (!l.description.empty()) s += " (" + l.description + ")";
  return s + ", lease ends in " + std::to_string(left_ms) + " ms";
}

std::string lookup_image_id(const ImageRef &ref) {
  const strata_client_api *strata_api = ref.api;
  const std::string key = format::dir_name_key(ref.name);
  strata_bytes k{key.data(), key.size()};
  strata_omap_iter_t it = nullptr;
  int rc = strata_omap_get_keys(ref.io, format::kDirectory, &k, 1, &it);
  if (rc == -ENOENT) fail(-ENOENT, ref, "no image");
  check_rc(rc, ref, "reading the image directory for");
  const void *kp, *vp;
  size_t kl, vl;
  std::string id;
  const bool found = strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1;
  if (found) id.assign(static_cast<const char *>(vp), vl);
  strata_omap_iter_end(it);
  if (!found) fail(-ENOENT, ref, "no image");
  return id;
}

// Applies one header omap entry to h.
static void apply_entry(Header *h, const std::string &key, const std::string &value) {
  using namespace format;
  if (key == kSize) {
    h->size = decode_u64(value).value_or(0);
  } else if (key == kObjectSize) {
    h->object_size = static_cast<uint32_t>(decode_u64(value).value_or(kDefaultObjectSize));
  } else if (key == kCreated) {
    h->created_ns = decode_u64(value).value_or(0);
  } else if (key == kSnapSeq) {
    h->snap_seq = decode_u64(value).value_or(0);
  } else if (key == kParent) {
    if (!value.empty()) h->parent = decode_parent(value);
  } else if (key.rfind(kSnapRequestPrefix, 0) == 0) {
    h->snap_requests.push_back(key.substr(std::strlen(kSnapRequestPrefix)));
  } else if (key.rfind(kSnapPrefix, 0) == 0) {
    auto id = parse_hex16(std::string_view(key).substr(std::strlen(kSnapPrefix)));
    if (!id) return;
    if (auto s = decode_snap(*id, value)) h->snaps[*id] = *s;
  }
}

Header read_header(const ImageRef &ref, const std::string &id) {
  const strata_client_api *strata_api = ref.api;
  const std::string oid = format::header_oid(id);
  Header h;
  h.id = id;
  // The first page of the omap, the lock and the version in one read; a
  // header with more keys than a page (many snapshots) is read on in pages.
  strata_read_op_t op = strata_read_op_new();
  if (!op) fail(-ENOMEM, ref, "reading the header of");
  strata_omap_iter_t it = nullptr;
  int omap_rc = 0, xattr_rc = 0;
  char lockbuf[4096];
  size_t lock_len = 0;
  strata_read_op_omap_list(op, nullptr, 0, nullptr, 0, 1000, &it, &omap_rc);
  strata_read_op_getxattr(op, format::kLockXattr, lockbuf, sizeof lockbuf, &lock_len, &xattr_rc);
  uint64_t version = 0;
  int rc = strata_read_op_operate(op, ref.io, oid.c_str(), &version);
  strata_read_op_release(op);
  if (rc == -ENODATA && omap_rc == 0) rc = 0;  // no lock xattr: free
  if (rc < 0) {
    if (it) strata_omap_iter_end(it);
    if (rc == -ENOENT) fail(-ENOENT, ref, "no header for image (id " + id + ")");
    fail(rc, ref, "reading the header of");
  }
  h.version = version;
  if (xattr_rc == 0) {
    h.lock_raw.assign(lockbuf, std::min(lock_len, sizeof lockbuf));
    h.lock = format::decode_lock(h.lock_raw);
  }
  std::string last;
  bool more = false;
  while (it) {
    const void *kp, *vp;
    size_t kl, vl;
    while (strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1) {
      last.assign(static_cast<const char *>(kp), kl);
      apply_entry(&h, last, std::string(static_cast<const char *>(vp), vl));
    }
    more = strata_omap_iter_more(it) == 1;
    strata_omap_iter_end(it);
    it = nullptr;
    if (!more) break;
    rc = strata_omap_list(ref.io, oid.c_str(), last.data(), last.size(), nullptr, 0, 1000, &it);
    check_rc(rc, ref, "reading the header of");
  }
  return h;
}

// The names under one request prefix ("snapreq_"): the keys after the
// prefix and before it with its last byte ('_') raised to '`'.
static std::vector<std::string> list_requests(const ImageRef &ref, const std::string &id,
                                              const std::string &first) {
  const strata_client_api *strata_api = ref.api;
  std::string end = first;
  end.back() = '`';
  strata_omap_iter_t it = nullptr;
  const int rc = strata_omap_list(ref.io, format::header_oid(id).c_str(), first.data(),
                                  first.size(), end.data(), end.size(), 100, &it);
  check_rc(rc, ref, "reading snapshot requests of");
  std::vector<std::string> names;
  const void *kp, *vp;
  size_t kl, vl;
  while (strata_omap_iter_next(it, &kp, &kl, &vp, &vl) == 1)
    names.emplace_back(static_cast<const char *>(kp) + first.size(), kl - first.size());
  strata_omap_iter_end(it);
  return names;
}

std::vector<std::string> list_snap_requests(const ImageRef &ref, const std::string &id) {
  return list_requests(ref, id, format::kSnapRequestPrefix);
}

std::vector<std::string> list_snap_remove_requests(const ImageRef &ref, const std::string &id) {
  return list_requests(ref, id, format::kSnapRemoveRequestPrefix);
}

}  // namespace strata::rbd
