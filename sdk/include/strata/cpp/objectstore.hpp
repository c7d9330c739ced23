// Write an object-store plugin as a C++ class and export it with one macro:
//
//   class MyStore : public strata::sdk::ObjectStore {
//    public:
//     static void mkfs(const strata::sdk::OpenArgs &args);
//     static std::unique_ptr<MyStore> open(const strata::sdk::OpenArgs &args);
//     ... overrides ...
//   };
//   static const strata_option_spec kOptions[] = {{"my_opt", STRATA_OPT_INT, "4", nullptr, "..."}};
//   STRATA_OBJECTSTORE_PLUGIN(MyStore, "mine", "0.1.0", "one line", kOptions)
//
// A plugin without options leaves the last argument out.
//
// apply() gets the C transaction: step through its ops with ops_of(txn)
// (never txn.ops[i]: ops are txn.op_size bytes apart since ABI 1.3).
//
// Methods report failure by throwing strata::sdk::Error; the adapter turns it
// into a negative errno and message at the C boundary. Semantics of each
// method are those of the matching entry in strata/objectstore.h.
#pragma once

#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "strata/cpp/plugin_support.hpp"
#include "strata/objectstore.h"

namespace strata::sdk {

// The ops of a transaction, by value, stepping by the sender's op size: a
// field the sender's strata_op did not have reads as zero.
class TxnOps {
 public:
  explicit TxnOps(const strata_txn &t) : t_(t) {}
  size_t size() const { return t_.n_ops; }
  bool empty() const { return t_.n_ops == 0; }
  strata_op operator[](size_t i) const {
    strata_op op{};
    size_t stride = strata_txn_op_stride(&t_);
    std::memcpy(&op, strata_txn_op(&t_, i), stride < sizeof op ? stride : sizeof op);
    return op;
  }

  class iterator {
   public:
    using value_type = strata_op;
    using difference_type = std::ptrdiff_t;
    iterator(const TxnOps *ops, size_t i) : ops_(ops), i_(i) {}
    strata_op operator*() const { return (*ops_)[i_]; }
    iterator &operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator &o) const { return i_ == o.i_; }
    bool operator!=(const iterator &o) const { return i_ != o.i_; }  // C++17 plugins

   private:
    const TxnOps *ops_;
    size_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, t_.n_ops}; }

 private:
  const strata_txn &t_;
};

inline TxnOps ops_of(const strata_txn &t) { return TxnOps(t); }

// Return true to continue, false to stop.
using KvVisitor = std::function<bool(std::string_view key, std::string_view value)>;
using NameVisitor = std::function<bool(std::string_view name)>;

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  virtual uint64_t capabilities() const = 0;
  virtual void apply(const strata_txn &txn) = 0;
  virtual void checkpoint(uint64_t seq) = 0;
  virtual uint64_t committed_seq() = 0;

  // Throws Error(ENOENT) for a missing object; returns bytes copied.
  virtual uint64_t read(std::string_view coll, std::string_view oid, uint64_t off, uint64_t len,
                        void *buf) = 0;
  virtual strata_object_stat stat(std::string_view coll, std::string_view oid) = 0;
  // False when the xattr is absent; throws Error(ENOENT) for a missing object.
  virtual bool getxattr(std::string_view coll, std::string_view oid, std::string_view name,
                        std::string &value) = 0;
  virtual void getxattrs(std::string_view coll, std::string_view oid, const KvVisitor &v) = 0;
  virtual std::string omap_get_header(std::string_view coll, std::string_view oid) = 0;
  virtual bool omap_get(std::string_view coll, std::string_view oid, std::string_view key,
                        std::string &value) = 0;
  virtual void omap_iterate(std::string_view coll, std::string_view oid,
                            std::string_view start_after, std::string_view end, uint64_t limit,
                            const KvVisitor &v) = 0;
  virtual void list_objects(std::string_view coll, std::string_view start_after, uint64_t limit,
                            const NameVisitor &v) = 0;
  virtual void list_collections(const NameVisitor &v) = 0;
  virtual strata_store_usage usage() = 0;
  // Number of problems found; details through the host log.
  virtual int64_t fsck() { return 0; }

  // ABI 1.1 staged writes; only called when capabilities() has
  // STRATA_OS_CAP_STAGED_WRITES.
  virtual uint64_t stage_write(const void *, size_t) {
    throw Error(EOPNOTSUPP, "staged writes not supported");
  }
  virtual void stage_release_unused() {}
  // ABI 1.2: drop one stage no transaction will name.
  virtual void stage_release(uint64_t) {}
  // ABI 1.3 control call: 0 (or a count) when `op` is served, -EOPNOTSUPP
  // for an op this store does not implement; may throw Error. The default
  // serves the public ops through the typed methods below; override it for
  // vendor ops (and call this one for the rest).
  virtual int control(int op, void *arg) {
    if (op == STRATA_OS_CTL_CHECKSUM_FAILURES) {
      std::optional<uint64_t> n = checksum_failures();
      if (!n) return -EOPNOTSUPP;
      if (!arg) throw Error(EINVAL, "control CHECKSUM_FAILURES: no uint64_t to fill (arg NULL)");
      *static_cast<uint64_t *>(arg) = *n;
      return 0;
    }
    return -EOPNOTSUPP;
  }
  // STRATA_OS_CTL_CHECKSUM_FAILURES: checksum failures met since open, or
  // nullopt when this store keeps no checksums (the op then answers
  // -EOPNOTSUPP).
  virtual std::optional<uint64_t> checksum_failures() const { return std::nullopt; }
};

namespace detail {

inline int64_t copy_out(const std::string &v, void *buf, size_t cap) {
  if (buf && v.size() <= cap && !v.empty()) std::memcpy(buf, v.data(), v.size());
  return static_cast<int64_t>(v.size());
}

template <class T>
struct ObjectStoreAdapter {
  static ObjectStore *self(strata_objectstore *os) { return reinterpret_cast<ObjectStore *>(os); }

  static int mkfs(const strata_open_args *a, strata_err *err) {
    return guard(err, [&] {
      T::mkfs(OpenArgs(a));
      return 0;
    });
  }
  static int open(const strata_open_args *a, strata_objectstore **out, strata_err *err) {
    *out = nullptr;
    return guard(err, [&] {
      std::unique_ptr<ObjectStore> s = T::open(OpenArgs(a));
      *out = reinterpret_cast<strata_objectstore *>(s.release());
      return 0;
    });
  }
  static void close(strata_objectstore *os) {
    strata_err ignored;
    guard(&ignored, [&] {
      delete self(os);
      return 0;
    });
  }
  static uint64_t capabilities(strata_objectstore *os) { return self(os)->capabilities(); }
  static int apply(strata_objectstore *os, const strata_txn *t, strata_err *err) {
    return guard(err, [&] {
      self(os)->apply(*t);
      return 0;
    });
  }
  static int checkpoint(strata_objectstore *os, uint64_t seq, strata_err *err) {
    return guard(err, [&] {
      self(os)->checkpoint(seq);
      return 0;
    });
  }
  static int committed_seq(strata_objectstore *os, uint64_t *seq, strata_err *err) {
    return guard(err, [&] {
      *seq = self(os)->committed_seq();
      return 0;
    });
  }
  static int64_t read(strata_objectstore *os, strata_slice c, strata_slice o, uint64_t off,
                      uint64_t len, void *buf, strata_err *err) {
    return guard(err, [&]() -> int64_t {
      return static_cast<int64_t>(self(os)->read(view(c), view(o), off, len, buf));
    });
  }
  static int stat(strata_objectstore *os, strata_slice c, strata_slice o, strata_object_stat *out,
                  strata_err *err) {
    return guard(err, [&] {
      strata_object_stat st = self(os)->stat(view(c), view(o));
      uint32_t size = out->struct_size ? out->struct_size : sizeof st;
      st.struct_size = size < sizeof st ? size : sizeof st;
      std::memcpy(out, &st, st.struct_size);
      return 0;
    });
  }
  static int64_t getxattr(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice n,
                          void *buf, size_t cap, strata_err *err) {
    return guard(err, [&]() -> int64_t {
      std::string v;
      if (!self(os)->getxattr(view(c), view(o), view(n), v)) return -ENODATA;
      return copy_out(v, buf, cap);
    });
  }
  static int getxattrs(strata_objectstore *os, strata_slice c, strata_slice o, strata_kv_cb cb,
                       void *ctx, strata_err *err) {
    return guard(err, [&] {
      VisitStop stop;
      self(os)->getxattrs(view(c), view(o), [&](std::string_view k, std::string_view v) {
        return stop.go_on(cb(ctx, slice(k), slice(v)));
      });
      return stop.value;
    });
  }
  static int64_t omap_get_header(strata_objectstore *os, strata_slice c, strata_slice o,
                                 void *buf, size_t cap, strata_err *err) {
    return guard(err, [&]() -> int64_t {
      return copy_out(self(os)->omap_get_header(view(c), view(o)), buf, cap);
    });
  }
  static int64_t omap_get(strata_objectstore *os, strata_slice c, strata_slice o, strata_slice k,
                          void *buf, size_t cap, strata_err *err) {
    return guard(err, [&]() -> int64_t {
      std::string v;
      if (!self(os)->omap_get(view(c), view(o), view(k), v)) return -ENODATA;
      return copy_out(v, buf, cap);
    });
  }
  static int omap_iterate(strata_objectstore *os, strata_slice c, strata_slice o,
                          strata_slice start_after, strata_slice end, uint64_t limit,
                          strata_kv_cb cb, void *ctx, strata_err *err) {
    return guard(err, [&] {
      VisitStop stop;
      self(os)->omap_iterate(view(c), view(o), view(start_after), view(end), limit,
                             [&](std::string_view k, std::string_view v) {
                               return stop.go_on(cb(ctx, slice(k), slice(v)));
                             });
      return stop.value;
    });
  }
  static int list_objects(strata_objectstore *os, strata_slice c, strata_slice start_after,
                          uint64_t limit, strata_name_cb cb, void *ctx, strata_err *err) {
    return guard(err, [&] {
      VisitStop stop;
      self(os)->list_objects(view(c), view(start_after), limit,
                             [&](std::string_view n) { return stop.go_on(cb(ctx, slice(n))); });
      return stop.value;
    });
  }
  static int list_collections(strata_objectstore *os, strata_name_cb cb, void *ctx,
                              strata_err *err) {
    return guard(err, [&] {
      VisitStop stop;
      self(os)->list_collections([&](std::string_view n) { return stop.go_on(cb(ctx, slice(n))); });
      return stop.value;
    });
  }
  static int usage(strata_objectstore *os, strata_store_usage *out, strata_err *err) {
    return guard(err, [&] {
      strata_store_usage u = self(os)->usage();
      uint32_t size = out->struct_size ? out->struct_size : sizeof u;
      u.struct_size = size < sizeof u ? size : sizeof u;
      std::memcpy(out, &u, u.struct_size);
      return 0;
    });
  }
  static int64_t fsck(strata_objectstore *os, strata_err *err) {
    return guard(err, [&]() -> int64_t { return self(os)->fsck(); });
  }
  static int stage_write(strata_objectstore *os, const void *data, size_t len, uint64_t *id,
                         strata_err *err) {
    return guard(err, [&] {
      *id = self(os)->stage_write(data, len);
      return 0;
    });
  }
  static int stage_release_unused(strata_objectstore *os, strata_err *err) {
    return guard(err, [&] {
      self(os)->stage_release_unused();
      return 0;
    });
  }
  static int stage_release(strata_objectstore *os, uint64_t id, strata_err *err) {
    return guard(err, [&] {
      self(os)->stage_release(id);
      return 0;
    });
  }
  static int control(strata_objectstore *os, int op, void *arg, strata_err *err) {
    return guard(err, [&] { return self(os)->control(op, arg); });
  }

  static constexpr strata_objectstore_ops ops = {
      sizeof(strata_objectstore_ops), 0, mkfs, open, close, capabilities, apply, checkpoint,
      committed_seq, read, stat, getxattr, getxattrs, omap_get_header, omap_get, omap_iterate,
      list_objects, list_collections, usage, fsck, stage_write, stage_release_unused,
      stage_release, control};
};

}  // namespace detail
}  // namespace strata::sdk

#define STRATA_OBJECTSTORE_PLUGIN(Class, name, version, description, ...)                    \
  static const strata_plugin_descriptor strata_plugin_descriptor_ = {                        \
      sizeof(strata_plugin_descriptor),                                                      \
      STRATA_ABI_MAJOR,                                                                      \
      STRATA_ABI_MINOR,                                                                      \
      STRATA_KIND_OBJECTSTORE,                                                               \
      0,                                                                                     \
      name,                                                                                  \
      version,                                                                               \
      description,                                                                           \
      &::strata::sdk::detail::ObjectStoreAdapter<Class>::ops,                                \
      ::strata::sdk::detail::OptionTable{__VA_ARGS__}.specs,                                 \
      ::strata::sdk::detail::OptionTable{__VA_ARGS__}.count,                                 \
      {}};                                                                                   \
  STRATA_DEFINE_PLUGIN_ENTRY(&strata_plugin_descriptor_)
