// The read side: data, stat, xattrs, omap, listings, usage and space, and
// the backend's fsck. A read holds its object's stripe shared (the apply
// holds it exclusively), and first waits for any acknowledged but not yet
// applied transaction of that object (Ack::kDurable, see store.h).
//
// Threading: any caller thread, also a store callback, except that an
// Ack::kDurable callback must not read what it acknowledges (store.h).
// fsck() drains first, so it is never called from a callback.
#include "store/store.h"
#include "store/store_internal.h"

namespace strata::store {

using namespace internal;

std::shared_lock<std::shared_mutex> Store::read_lock(std::string_view coll, std::string_view oid) {
  std::string key = object_key(coll, oid);
  {
    std::unique_lock lk(mu_);
    // After a failure the applies never come; reads then see what is there.
    if (!acked_unapplied_.empty())
      done_cv_.wait(lk, [&] { return !failed_.ok() || !acked_unapplied_.count(key); });
  }
  return std::shared_lock(stripes_[std::hash<std::string>{}(key) % kStripes]);
}

void Store::wait_collection_applied(std::string_view coll) {
  std::string prefix = object_key(coll, "");
  std::unique_lock lk(mu_);
  done_cv_.wait(lk, [&] {
    if (!failed_.ok()) return true;
    auto it = acked_unapplied_.lower_bound(prefix);
    return it == acked_unapplied_.end() || it->first.compare(0, prefix.size(), prefix) != 0;
  });
}

namespace {

// Calls a getxattr-style function (returns full length; copies when it fits)
// until the buffer is large enough.
template <class F>
Result<std::string> fetch_value(F &&call, const std::string &what) {
  std::string buf(256, '\0');
  for (int attempt = 0; attempt < 4; ++attempt) {
    strata_err err{};
    int64_t n = call(buf.data(), buf.size(), &err);
    if (n < 0) return Status::Error(static_cast<int>(n), what + ": " + err.msg);
    if (static_cast<uint64_t>(n) <= buf.size()) {
      buf.resize(n);
      return buf;
    }
    buf.assign(n, '\0');
  }
  return Status::Error(EIO, what + ": value keeps changing size");
}

// Visitor (plugin.h convention) gathering key/value pairs into a KvList.
int collect_pair(void *ctx, strata_slice k, strata_slice v) {
  static_cast<Store::KvList *>(ctx)->emplace_back(std::string(sv(k)), std::string(sv(v)));
  return 0;
}

}  // namespace

Result<std::string> Store::read(std::string_view coll, std::string_view oid, uint64_t off,
                                uint64_t len) {
  auto lock = read_lock(coll, oid);
  std::string what = "read " + std::string(coll) + "/" + std::string(oid);
  if (len == UINT64_MAX) {
    auto st = stat_unlocked(coll, oid);
    if (!st.ok()) return st.status();
    len = st->size > off ? st->size - off : 0;
  }
  std::string buf(len, '\0');
  strata_err err{};
  int64_t n =
      backend_->ops()->read(backend_->handle(), sl(coll), sl(oid), off, len, buf.data(), &err);
  if (n < 0) return Status::Error(static_cast<int>(n), what + ": " + err.msg);
  buf.resize(n);
  return buf;
}

Result<strata_object_stat> Store::stat(std::string_view coll, std::string_view oid) {
  auto lock = read_lock(coll, oid);
  return stat_unlocked(coll, oid);
}

Result<strata_object_stat> Store::stat_unlocked(std::string_view coll, std::string_view oid) {
  strata_object_stat st{};
  st.struct_size = sizeof st;
  strata_err err{};
  int rc = backend_->ops()->stat(backend_->handle(), sl(coll), sl(oid), &st, &err);
  if (rc < 0)
    return Status::Error(rc, "stat " + std::string(coll) + "/" + std::string(oid) + ": " + err.msg);
  return st;
}

Result<std::string> Store::getxattr(std::string_view coll, std::string_view oid,
                                    std::string_view name) {
  auto lock = read_lock(coll, oid);
  return fetch_value(
      [&](void *b, size_t cap, strata_err *e) {
        return backend_->ops()->getxattr(backend_->handle(), sl(coll), sl(oid), sl(name), b, cap,
                                         e);
      },
      "getxattr " + std::string(coll) + "/" + std::string(oid) + " " + std::string(name));
}

Result<Store::KvList> Store::getxattrs(std::string_view coll, std::string_view oid) {
  auto lock = read_lock(coll, oid);
  KvList out;
  strata_err err{};
  int rc = backend_->getxattrs(sl(coll), sl(oid), collect_pair, &out, &err);
  if (rc < 0) return Status::Error(rc, "getxattrs " + std::string(oid) + ": " + err.msg);
  return out;
}

Result<std::string> Store::omap_get_header(std::string_view coll, std::string_view oid) {
  auto lock = read_lock(coll, oid);
  return fetch_value(
      [&](void *b, size_t cap, strata_err *e) {
        return backend_->ops()->omap_get_header(backend_->handle(), sl(coll), sl(oid), b, cap, e);
      },
      "omap header " + std::string(coll) + "/" + std::string(oid));
}

Result<std::string> Store::omap_get(std::string_view coll, std::string_view oid,
                                    std::string_view key) {
  auto lock = read_lock(coll, oid);
  return fetch_value(
      [&](void *b, size_t cap, strata_err *e) {
        return backend_->ops()->omap_get(backend_->handle(), sl(coll), sl(oid), sl(key), b, cap, e);
      },
      "omap get " + std::string(coll) + "/" + std::string(oid));
}

Result<Store::KvList> Store::omap_list(std::string_view coll, std::string_view oid,
                                       std::string_view start_after, std::string_view end,
                                       uint64_t limit) {
  auto lock = read_lock(coll, oid);
  KvList out;
  strata_err err{};
  int rc = backend_->omap_iterate(sl(coll), sl(oid), sl(start_after), sl(end), limit, collect_pair,
                                  &out, &err);
  if (rc < 0) return Status::Error(rc, "omap list " + std::string(oid) + ": " + err.msg);
  return out;
}

Result<std::vector<std::string>> Store::list_objects(std::string_view coll,
                                                     std::string_view start_after, uint64_t limit) {
  wait_collection_applied(coll);
  std::vector<std::string> out;
  strata_err err{};
  auto cb = [](void *ctx, strata_slice n) {
    static_cast<std::vector<std::string> *>(ctx)->emplace_back(sv(n));
    return 0;
  };
  int rc = backend_->list_objects(sl(coll), sl(start_after), limit, cb, &out, &err);
  if (rc < 0) return Status::Error(rc, "list " + std::string(coll) + ": " + err.msg);
  return out;
}

Result<std::vector<std::string>> Store::list_collections() {
  std::vector<std::string> out;
  strata_err err{};
  auto cb = [](void *ctx, strata_slice n) {
    static_cast<std::vector<std::string> *>(ctx)->emplace_back(sv(n));
    return 0;
  };
  int rc = backend_->list_collections(cb, &out, &err);
  if (rc < 0) return Status::Error(rc, std::string("list collections: ") + err.msg);
  return out;
}

Result<strata_store_usage> Store::usage() {
  strata_store_usage u{};
  u.struct_size = sizeof u;
  strata_err err{};
  int rc = backend_->ops()->usage(backend_->handle(), &u, &err);
  if (rc < 0) return Status::Error(rc, std::string("usage: ") + err.msg);
  return u;
}

Result<StoreSpace> Store::space() const {
  auto s = filesystem_space(dir_);
  if (!s.ok()) return s.status().Context("store " + dir_);
  s->used_bytes += staging_bytes_.load();
  return s;
}

Result<int64_t> Store::fsck() {
  drain();
  strata_err err{};
  int64_t n = backend_->ops()->fsck(backend_->handle(), &err);
  if (n < 0) return Status::Error(static_cast<int>(n), std::string("fsck: ") + err.msg);
  return n;
}

}  // namespace strata::store
