// FreshStore: a store of the plugin under test in a private directory, with
// wrappers that turn the C read side into strings and vectors.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "kit.h"

namespace strata::conformance {

namespace {

strata_slice sl(std::string_view s) { return {s.data(), s.size()}; }

int collect_kv(void *ctx, strata_slice k, strata_slice v) {
  static_cast<KvList *>(ctx)->emplace_back(std::string(k.data, k.len), std::string(v.data, v.len));
  return 0;
}

int collect_name(void *ctx, strata_slice n) {
  static_cast<NameList *>(ctx)->emplace_back(n.data, n.len);
  return 0;
}

// Printable form of a byte string for dump(): bytes outside printable ASCII
// (and the backslash) as \xHH, so dumps of binary names stay one line each.
std::string escaped(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// FNV-1a, 64 bit: enough to tell two object contents apart in a dump.
struct Digest {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  }
};

}  // namespace

FreshStore::FreshStore(std::vector<std::pair<std::string, std::string>> option_overrides)
    : dir_("store"), args_(dir_.path(), std::move(option_overrides)) {
  strata_err err{};
  int rc = ops().mkfs(args_.get(), &err);
  if (rc != 0) throw CallFailed("mkfs(" + path() + ")", rc, err);
  reopen();
}

FreshStore::~FreshStore() { close(); }

uint64_t FreshStore::caps() const {
  if (!os_) throw std::logic_error("FreshStore::caps on a closed store");
  return ops().capabilities(os_);
}

void FreshStore::close() {
  if (os_) ops().close(os_);
  os_ = nullptr;
}

void FreshStore::reopen() {
  close();
  strata_err err{};
  strata_objectstore *os = nullptr;
  int rc = ops().open(args_.get(), &os, &err);
  if (rc != 0) throw CallFailed("open(" + path() + ")", rc, err);
  if (!os) throw std::runtime_error("open(" + path() + ") returned 0 but no instance");
  os_ = os;
}

int FreshStore::apply_rc(const TxnBuilder &txn, uint64_t seq, strata_err *err) {
  strata_err local{};
  strata_txn t = txn.txn(seq);
  return ops().apply(os_, &t, err ? err : &local);
}

void FreshStore::apply_at(const TxnBuilder &txn, uint64_t seq, uint32_t flags) {
  strata_err err{};
  strata_txn t = txn.txn(seq, flags);
  int rc = ops().apply(os_, &t, &err);
  if (rc != 0) throw CallFailed("apply(seq " + std::to_string(seq) + ")", rc, err);
  last_seq_ = std::max(last_seq_, seq);
}

uint64_t FreshStore::apply(const TxnBuilder &txn, uint32_t flags) {
  uint64_t seq = last_seq_ + 1;
  apply_at(txn, seq, flags);
  return seq;
}

void FreshStore::checkpoint() { checkpoint(last_seq_); }

void FreshStore::checkpoint(uint64_t seq) {
  strata_err err{};
  int rc = ops().checkpoint(os_, seq, &err);
  if (rc != 0) throw CallFailed("checkpoint(" + std::to_string(seq) + ")", rc, err);
}

uint64_t FreshStore::committed_seq() {
  strata_err err{};
  uint64_t seq = 0;
  int rc = ops().committed_seq(os_, &seq, &err);
  if (rc != 0) throw CallFailed("committed_seq", rc, err);
  return seq;
}

// Read buffers start out non-zero so that a plugin which skips filling
// holes with zeros cannot pass by luck.
constexpr char kUnreadByte = '\xa5';

int64_t FreshStore::read_rc(std::string_view c, std::string_view o, uint64_t off, uint64_t len,
                            std::string *out) const {
  std::string buf(len, kUnreadByte);
  strata_err err{};
  int64_t n = ops().read(os_, sl(c), sl(o), off, len, buf.data(), &err);
  if (n >= 0 && out) {
    buf.resize(static_cast<size_t>(std::min<int64_t>(n, static_cast<int64_t>(len))));
    *out = std::move(buf);
  }
  return n;
}

std::string FreshStore::read(std::string_view c, std::string_view o, uint64_t off,
                             uint64_t len) const {
  std::string buf(len, kUnreadByte);
  strata_err err{};
  int64_t n = ops().read(os_, sl(c), sl(o), off, len, buf.data(), &err);
  if (n < 0) throw CallFailed("read(" + escaped(o) + ")", n, err);
  if (static_cast<uint64_t>(n) > len)
    throw std::runtime_error("read(" + escaped(o) + ") claims " + std::to_string(n) +
                             " bytes into a buffer of " + std::to_string(len));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

std::string FreshStore::read_all(std::string_view c, std::string_view o) const {
  return read(c, o, 0, size(c, o));
}

int FreshStore::stat_rc(std::string_view c, std::string_view o, strata_object_stat *out) const {
  strata_object_stat st{};
  st.struct_size = sizeof st;
  strata_err err{};
  int rc = ops().stat(os_, sl(c), sl(o), &st, &err);
  if (out) *out = st;
  return rc;
}

strata_object_stat FreshStore::stat(std::string_view c, std::string_view o) const {
  strata_object_stat st{};
  st.struct_size = sizeof st;
  strata_err err{};
  int rc = ops().stat(os_, sl(c), sl(o), &st, &err);
  if (rc != 0) throw CallFailed("stat(" + escaped(o) + ")", rc, err);
  return st;
}

bool FreshStore::exists(std::string_view c, std::string_view o) const {
  int rc = stat_rc(c, o);
  if (rc == 0) return true;
  if (rc == -ENOENT) return false;
  strata_err none{};
  throw CallFailed("stat(" + escaped(o) + ")", rc, none);
}

uint64_t FreshStore::size(std::string_view c, std::string_view o) const { return stat(c, o).size; }

int64_t FreshStore::getxattr_rc(std::string_view c, std::string_view o, std::string_view name,
                                void *buf, size_t cap) const {
  strata_err err{};
  return ops().getxattr(os_, sl(c), sl(o), sl(name), buf, cap, &err);
}

std::optional<std::string> FreshStore::getxattr(std::string_view c, std::string_view o,
                                                std::string_view name) const {
  // Ask for the length first, then fetch: the buffer convention under test.
  std::string buf(256, '\0');
  for (;;) {
    strata_err err{};
    int64_t n = ops().getxattr(os_, sl(c), sl(o), sl(name), buf.data(), buf.size(), &err);
    if (n == -ENODATA) return std::nullopt;
    if (n < 0) throw CallFailed("getxattr(" + escaped(o) + ", " + escaped(name) + ")", n, err);
    if (static_cast<size_t>(n) <= buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    buf.assign(static_cast<size_t>(n), '\0');
  }
}

int FreshStore::getxattrs_rc(std::string_view c, std::string_view o, KvList *out) const {
  KvList list;
  strata_err err{};
  int rc = ops().getxattrs(os_, sl(c), sl(o), collect_kv, &list, &err);
  if (out) *out = std::move(list);
  return rc;
}

KvList FreshStore::getxattrs(std::string_view c, std::string_view o) const {
  KvList list;
  strata_err err{};
  int rc = ops().getxattrs(os_, sl(c), sl(o), collect_kv, &list, &err);
  if (rc != 0) throw CallFailed("getxattrs(" + escaped(o) + ")", rc, err);
  return list;
}

int64_t FreshStore::omap_header_rc(std::string_view c, std::string_view o, void *buf,
                                   size_t cap) const {
  strata_err err{};
  return ops().omap_get_header(os_, sl(c), sl(o), buf, cap, &err);
}

std::string FreshStore::omap_header(std::string_view c, std::string_view o) const {
  std::string buf(256, '\0');
  for (;;) {
    strata_err err{};
    int64_t n = ops().omap_get_header(os_, sl(c), sl(o), buf.data(), buf.size(), &err);
    if (n < 0) throw CallFailed("omap_get_header(" + escaped(o) + ")", n, err);
    if (static_cast<size_t>(n) <= buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    buf.assign(static_cast<size_t>(n), '\0');
  }
}

int64_t FreshStore::omap_get_rc(std::string_view c, std::string_view o, std::string_view key,
                                void *buf, size_t cap) const {
  strata_err err{};
  return ops().omap_get(os_, sl(c), sl(o), sl(key), buf, cap, &err);
}

std::optional<std::string> FreshStore::omap_get(std::string_view c, std::string_view o,
                                                std::string_view key) const {
  std::string buf(256, '\0');
  for (;;) {
    strata_err err{};
    int64_t n = ops().omap_get(os_, sl(c), sl(o), sl(key), buf.data(), buf.size(), &err);
    if (n == -ENODATA) return std::nullopt;
    if (n < 0) throw CallFailed("omap_get(" + escaped(o) + ", " + escaped(key) + ")", n, err);
    if (static_cast<size_t>(n) <= buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    buf.assign(static_cast<size_t>(n), '\0');
  }
}

int FreshStore::omap_rc(std::string_view c, std::string_view o, std::string_view start_after,
                        std::string_view end, uint64_t limit, KvList *out) const {
  KvList list;
  strata_err err{};
  int rc = ops().omap_iterate(os_, sl(c), sl(o), sl(start_after), sl(end), limit, collect_kv, &list,
                              &err);
  if (out) *out = std::move(list);
  return rc;
}

KvList FreshStore::omap(std::string_view c, std::string_view o, std::string_view start_after,
                        std::string_view end, uint64_t limit) const {
  KvList list;
  strata_err err{};
  int rc = ops().omap_iterate(os_, sl(c), sl(o), sl(start_after), sl(end), limit, collect_kv, &list,
                              &err);
  if (rc != 0) throw CallFailed("omap_iterate(" + escaped(o) + ")", rc, err);
  return list;
}

int FreshStore::list_objects_rc(std::string_view c, std::string_view start_after, uint64_t limit,
                                NameList *out) const {
  NameList names;
  strata_err err{};
  int rc = ops().list_objects(os_, sl(c), sl(start_after), limit, collect_name, &names, &err);
  if (out) *out = std::move(names);
  return rc;
}

NameList FreshStore::list_objects(std::string_view c, std::string_view start_after,
                                  uint64_t limit) const {
  NameList names;
  strata_err err{};
  int rc = ops().list_objects(os_, sl(c), sl(start_after), limit, collect_name, &names, &err);
  if (rc != 0) throw CallFailed("list_objects(" + escaped(c) + ")", rc, err);
  return names;
}

NameList FreshStore::list_all_objects(std::string_view c, uint64_t page) const {
  NameList all;
  std::string cursor;
  for (;;) {
    NameList batch = list_objects(c, cursor, page);
    if (batch.size() > page)
      throw std::runtime_error("list_objects returned " + std::to_string(batch.size()) +
                               " names with limit " + std::to_string(page));
    // Each name must sort after the one before it (and the first after the
    // cursor); otherwise paging would never end or would repeat names.
    for (const std::string &name : batch) {
      const std::string &prev = all.empty() ? cursor : all.back();
      if (!all.empty() || !cursor.empty())
        if (!(prev < name))
          throw std::runtime_error("list_objects is not in bytewise order after the cursor: '" +
                                   escaped(name) + "' came after '" + escaped(prev) + "'");
      all.push_back(name);
    }
    if (batch.size() < page) return all;
    cursor = batch.back();
  }
}

NameList FreshStore::list_collections() const {
  NameList names;
  strata_err err{};
  int rc = ops().list_collections(os_, collect_name, &names, &err);
  if (rc != 0) throw CallFailed("list_collections", rc, err);
  return names;
}

strata_store_usage FreshStore::usage() const {
  strata_store_usage u{};
  u.struct_size = sizeof u;
  strata_err err{};
  int rc = ops().usage(os_, &u, &err);
  if (rc != 0) throw CallFailed("usage", rc, err);
  return u;
}

int64_t FreshStore::fsck() const {
  strata_err err{};
  int64_t n = ops().fsck(os_, &err);
  if (n < 0) throw CallFailed("fsck", n, err);
  return n;
}

bool FreshStore::staged_writes_supported() const {
  // The host's rule: a field exists only if the plugin's struct covers it.
  constexpr size_t kEnd = offsetof(strata_objectstore_ops, stage_release_unused) + sizeof(void *);
  return ops_size() >= kEnd && (caps() & STRATA_OS_CAP_STAGED_WRITES) != 0;
}

uint64_t FreshStore::stage_write(std::string_view data) {
  if (!staged_writes_supported())
    throw std::logic_error("stage_write on a plugin without staged writes");
  strata_err err{};
  uint64_t id = 0;
  int rc = ops().stage_write(os_, data.data(), data.size(), &id, &err);
  if (rc != 0) throw CallFailed("stage_write(" + std::to_string(data.size()) + " bytes)", rc, err);
  return id;
}

void FreshStore::stage_release_unused() {
  if (!staged_writes_supported())
    throw std::logic_error("stage_release_unused on a plugin without staged writes");
  strata_err err{};
  int rc = ops().stage_release_unused(os_, &err);
  if (rc != 0) throw CallFailed("stage_release_unused", rc, err);
}

bool FreshStore::stage_release_supported() const {
  constexpr size_t kEnd = offsetof(strata_objectstore_ops, stage_release) + sizeof(void *);
  return staged_writes_supported() && ops_size() >= kEnd && ops().stage_release != nullptr;
}

int FreshStore::stage_release(uint64_t id) {
  if (!stage_release_supported())
    throw std::logic_error("stage_release on a plugin without it");
  strata_err err{};
  return ops().stage_release(os_, id, &err);
}

std::string FreshStore::dump() const {
  std::string out;
  NameList colls = list_collections();
  std::sort(colls.begin(), colls.end());
  for (const std::string &c : colls) {
    out += "collection " + escaped(c) + "\n";
    for (const std::string &o : list_all_objects(c, 500)) {
      uint64_t sz = size(c, o);
      Digest d;
      constexpr uint64_t kChunk = 4 << 20;
      for (uint64_t off = 0; off < sz; off += kChunk)
        d.add(read(c, o, off, std::min(kChunk, sz - off)));
      out += "  object " + escaped(o) + " size " + std::to_string(sz) + " data " +
             std::to_string(d.h) + "\n";
      for (const auto &[k, v] : getxattrs(c, o))
        out += "    xattr " + escaped(k) + " = " + escaped(v) + "\n";
      out += "    omap header = " + escaped(omap_header(c, o)) + "\n";
      for (const auto &[k, v] : omap(c, o))
        out += "    omap " + escaped(k) + " = " + escaped(v) + "\n";
    }
  }
  return out;
}

}  // namespace strata::conformance
