// A kv backend instance loaded from the built plugin file through the host
// loader, with small wrappers that turn the C calls into test-friendly ones.
#pragma once

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "host/plugin_loader.h"
#include "strata/objectstore.h"
#include "temp_dir.h"
#include "txn_builder.h"

#ifndef STRATA_KV_PLUGIN_PATH
#error "STRATA_KV_PLUGIN_PATH must name the built libstrata_backend_kv.so"
#endif

namespace strata::test {

using conformance::TxnBuilder;

inline strata_slice sl(std::string_view s) { return {s.data(), s.size()}; }

class KvHarness {
 public:
  explicit KvHarness(std::string engine, std::string chunk_size = "64K")
      : options_{{"kv_engine", std::move(engine)},
                 {"kv_chunk_size", std::move(chunk_size)},
                 {"kv_cache_size", "8M"},
                 {"kv_write_buffer_size", "0"}} {
    auto loaded = host::load_plugin(STRATA_KV_PLUGIN_PATH, STRATA_KIND_OBJECTSTORE);
    INFO(loaded.status().message());
    REQUIRE(loaded.ok());
    plugin_ = loaded.value();
    ops_ = plugin_.ops<strata_objectstore_ops>();
    REQUIRE(mkfs() == 0);
    open();
  }
  ~KvHarness() { close(); }

  const strata_objectstore_ops &ops() const { return *ops_; }
  strata_objectstore *os() const { return os_; }
  const std::string &path() const { return dir_.path(); }
  const std::string &last_error() const { return err_msg_; }
  std::vector<std::string> log_lines() const {
    std::lock_guard lock(log_mu_);
    return log_;
  }
  void set_option(const std::string &key, const std::string &value) {
    for (auto &[k, v] : options_)
      if (k == key) v = value;
  }

  int mkfs() {
    return call([&](strata_err *e) { return ops_->mkfs(&open_args(), e); });
  }
  void open() { REQUIRE(try_open() == 0); }
  int try_open() {
    return call([&](strata_err *e) { return ops_->open(&open_args(), &os_, e); });
  }
  void close() {
    if (os_) ops_->close(os_);
    os_ = nullptr;
  }
  void reopen() {
    close();
    open();
  }

  int try_apply(uint64_t seq, const TxnBuilder &b, uint32_t flags = 0) {
    strata_txn t = b.txn(seq, flags);
    return call([&](strata_err *e) { return ops_->apply(os_, &t, e); });
  }
  void apply(uint64_t seq, const TxnBuilder &b, uint32_t flags = 0) {
    int rc = try_apply(seq, b, flags);
    INFO("apply seq " << seq << ": " << err_msg_);
    REQUIRE(rc == 0);
  }
  void checkpoint(uint64_t seq) {
    REQUIRE(call([&](strata_err *e) { return ops_->checkpoint(os_, seq, e); }) == 0);
  }
  uint64_t committed_seq() {
    uint64_t seq = 0;
    REQUIRE(call([&](strata_err *e) { return ops_->committed_seq(os_, &seq, e); }) == 0);
    return seq;
  }

  // Bytes read, or the negative errno.
  int64_t read_rc(std::string_view c, std::string_view o, uint64_t off, uint64_t len,
                  std::string *out) {
    out->assign(len, '\x5a');
    int64_t n = call64(
        [&](strata_err *e) { return ops_->read(os_, sl(c), sl(o), off, len, out->data(), e); });
    out->resize(n > 0 ? static_cast<size_t>(n) : 0);
    return n;
  }
  std::string read(std::string_view c, std::string_view o, uint64_t off, uint64_t len) {
    std::string out;
    int64_t n = read_rc(c, o, off, len, &out);
    INFO("read " << c << "/" << o << ": " << err_msg_);
    REQUIRE(n >= 0);
    return out;
  }
  int stat_rc(std::string_view c, std::string_view o, strata_object_stat *st) {
    *st = {};
    st->struct_size = sizeof *st;
    return call([&](strata_err *e) { return ops_->stat(os_, sl(c), sl(o), st, e); });
  }
  uint64_t size(std::string_view c, std::string_view o) {
    strata_object_stat st;
    REQUIRE(stat_rc(c, o, &st) == 0);
    return st.size;
  }
  bool exists(std::string_view c, std::string_view o) {
    strata_object_stat st;
    int rc = stat_rc(c, o, &st);
    REQUIRE((rc == 0 || rc == -ENOENT));
    return rc == 0;
  }
  // The value, or the negative errno as a string ("-61").
  std::string getxattr(std::string_view c, std::string_view o, std::string_view n) {
    return get_with_buffer([&](void *buf, size_t cap, strata_err *e) {
      return ops_->getxattr(os_, sl(c), sl(o), sl(n), buf, cap, e);
    });
  }
  std::string omap_get(std::string_view c, std::string_view o, std::string_view k) {
    return get_with_buffer([&](void *buf, size_t cap, strata_err *e) {
      return ops_->omap_get(os_, sl(c), sl(o), sl(k), buf, cap, e);
    });
  }
  std::string omap_header(std::string_view c, std::string_view o) {
    return get_with_buffer([&](void *buf, size_t cap, strata_err *e) {
      return ops_->omap_get_header(os_, sl(c), sl(o), buf, cap, e);
    });
  }
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  Pairs xattrs(std::string_view c, std::string_view o) {
    Pairs out;
    REQUIRE(call([&](strata_err *e) {
              return ops_->getxattrs(os_, sl(c), sl(o), collect_pair, &out, e);
            }) == 0);
    return out;
  }
  Pairs omap(std::string_view c, std::string_view o, std::string_view after = {},
             std::string_view end = {}, uint64_t limit = 0) {
    Pairs out;
    REQUIRE(call([&](strata_err *e) {
              return ops_->omap_iterate(os_, sl(c), sl(o), sl(after), sl(end), limit, collect_pair,
                                        &out, e);
            }) == 0);
    return out;
  }
  std::vector<std::string> list(std::string_view c, std::string_view after = {},
                                uint64_t limit = 0) {
    std::vector<std::string> out;
    REQUIRE(list_rc(c, after, limit, &out) == 0);
    return out;
  }
  int list_rc(std::string_view c, std::string_view after, uint64_t limit,
              std::vector<std::string> *out) {
    return call([&](strata_err *e) {
      return ops_->list_objects(os_, sl(c), sl(after), limit, collect_name, out, e);
    });
  }
  std::vector<std::string> collections() {
    std::vector<std::string> out;
    REQUIRE(call([&](strata_err *e) {
              return ops_->list_collections(os_, collect_name, &out, e);
            }) == 0);
    return out;
  }
  strata_store_usage usage() {
    strata_store_usage u{};
    u.struct_size = sizeof u;
    REQUIRE(call([&](strata_err *e) { return ops_->usage(os_, &u, e); }) == 0);
    return u;
  }
  int64_t fsck() {
    return call64([&](strata_err *e) { return ops_->fsck(os_, e); });
  }

 private:
  template <class F>
  int call(F &&f) {
    strata_err err{};
    int rc = f(&err);
    err_msg_ = rc < 0 ? err.msg : "";
    return rc;
  }
  template <class F>
  int64_t call64(F &&f) {
    strata_err err{};
    int64_t rc = f(&err);
    err_msg_ = rc < 0 ? err.msg : "";
    return rc;
  }
  // Exercises the buffer convention: first ask with a 1-byte buffer, then
  // with exactly the length reported.
  template <class F>
  std::string get_with_buffer(F &&f) {
    char probe = '\x5a';
    int64_t n = call64([&](strata_err *e) { return f(&probe, 1, e); });
    if (n < 0) return std::to_string(n);
    if (n > 1) REQUIRE(probe == '\x5a');  // too small: nothing copied
    std::string out(static_cast<size_t>(n), '\0');
    REQUIRE(call64([&](strata_err *e) { return f(out.data(), out.size(), e); }) == n);
    return out;
  }
  static int collect_pair(void *ctx, strata_slice k, strata_slice v) {
    static_cast<Pairs *>(ctx)->emplace_back(std::string(k.data, k.len), std::string(v.data, v.len));
    return 0;
  }
  static int collect_name(void *ctx, strata_slice n) {
    static_cast<std::vector<std::string> *>(ctx)->emplace_back(n.data, n.len);
    return 0;
  }
  static void log_to(void *ctx, int, const char *msg) {
    auto *self = static_cast<KvHarness *>(ctx);
    std::lock_guard lock(self->log_mu_);
    self->log_.emplace_back(msg);
  }
  const strata_open_args &open_args() {
    kvs_.clear();
    for (auto &[k, v] : options_) kvs_.push_back({k.c_str(), v.c_str()});
    host_ = {};
    host_.struct_size = sizeof host_;
    host_.ctx = this;
    host_.log = log_to;
    args_ = {};
    args_.struct_size = sizeof args_;
    args_.path = dir_.path().c_str();
    args_.options = kvs_.data();
    args_.n_options = kvs_.size();
    args_.host = &host_;
    return args_;
  }

  TempDir dir_;
  host::Plugin plugin_;
  const strata_objectstore_ops *ops_ = nullptr;
  strata_objectstore *os_ = nullptr;
  std::vector<std::pair<std::string, std::string>> options_;
  std::vector<strata_kv> kvs_;
  strata_host_services host_{};
  strata_open_args args_{};
  std::string err_msg_;
  mutable std::mutex log_mu_;
  std::vector<std::string> log_;
};

}  // namespace strata::test
