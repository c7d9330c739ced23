#include "api_cases.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace clienttest {

namespace {

// An ioctx on the case's pool, closed at scope end.
struct Io {
  strata_ioctx_t io = nullptr;
  Io(strata_cluster_t c, const std::string &pool) {
    int rc = strata_ioctx_create(c, pool.c_str(), &io);
    INFO(strata_last_error());
    REQUIRE(rc == 0);
  }
  ~Io() { strata_ioctx_destroy(io); }
  operator strata_ioctx_t() const { return io; }
};

std::string read_all(strata_ioctx_t io, const std::string &oid, size_t max = 1 << 20) {
  std::string buf(max, '\0');
  int64_t n = strata_read(io, oid.c_str(), buf.data(), buf.size(), 0);
  INFO(oid << ": " << strata_last_error());
  REQUIRE(n >= 0);
  buf.resize(size_t(n));
  return buf;
}

strata_obj_stat stat_of(strata_ioctx_t io, const std::string &oid) {
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  int rc = strata_stat(io, oid.c_str(), &st);
  INFO(oid << ": " << strata_last_error());
  REQUIRE(rc == 0);
  return st;
}

int stat_rc(strata_ioctx_t io, const std::string &oid) {
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  return strata_stat(io, oid.c_str(), &st);
}

strata_bytes b(const std::string &s) { return strata_bytes{s.data(), s.size()}; }

std::vector<std::pair<std::string, std::string>> drain(strata_omap_iter_t it) {
  std::vector<std::pair<std::string, std::string>> out;
  const void *k, *v;
  size_t kl, vl;
  while (strata_omap_iter_next(it, &k, &kl, &v, &vl) == 1)
    out.emplace_back(std::string(static_cast<const char *>(k), kl),
                     std::string(static_cast<const char *>(v), vl));
  return out;
}

std::vector<std::pair<std::string, std::string>> omap_list(strata_ioctx_t io,
                                                           const std::string &oid,
                                                           const std::string &after = "",
                                                           const std::string &end = "",
                                                           uint32_t max = 0, int *more = nullptr) {
  strata_omap_iter_t it = nullptr;
  int rc = strata_omap_list(io, oid.c_str(), after.data(), after.size(), end.data(), end.size(),
                            max, &it);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  auto out = drain(it);
  if (more) *more = strata_omap_iter_more(it);
  strata_omap_iter_end(it);
  return out;
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto &c : s) c = char(rng());
  return s;
}

}  // namespace

void api_case_object_io(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  const std::string oid = "io.obj";
  REQUIRE(strata_write_full(io, oid.c_str(), "hello world", 11) == 0);
  CHECK(read_all(io, oid) == "hello world");
  REQUIRE(strata_write(io, oid.c_str(), "WORLD", 5, 6) == 0);
  CHECK(read_all(io, oid) == "hello WORLD");

  strata_obj_stat s1 = stat_of(io, oid);
  CHECK(s1.size == 11);
  CHECK(s1.mtime_ns > 0);
  CHECK(s1.version > 0);

  // A write past the end leaves a hole of zeros.
  REQUIRE(strata_write(io, oid.c_str(), "x", 1, 20) == 0);
  std::string all = read_all(io, oid);
  CHECK(all == std::string("hello WORLD") + std::string(9, '\0') + "x");
  strata_obj_stat s2 = stat_of(io, oid);
  CHECK(s2.size == 21);
  CHECK(s2.version > s1.version);

  REQUIRE(strata_append(io, oid.c_str(), "!!", 2) == 0);
  CHECK(stat_of(io, oid).size == 23);

  // Ranged reads: inside, across the end, past the end, nothing.
  char buf[16] = {};
  CHECK(strata_read(io, oid.c_str(), buf, 5, 6) == 5);
  CHECK(std::string(buf, 5) == "WORLD");
  CHECK(strata_read(io, oid.c_str(), buf, sizeof buf, 20) == 3);
  CHECK(std::string(buf, 3) == "x!!");
  CHECK(strata_read(io, oid.c_str(), buf, sizeof buf, 1000) == 0);
  CHECK(strata_read(io, oid.c_str(), buf, 0, 0) == 0);

  REQUIRE(strata_truncate(io, oid.c_str(), 5) == 0);
  CHECK(read_all(io, oid) == "hello");
  REQUIRE(strata_truncate(io, oid.c_str(), 8) == 0);
  CHECK(read_all(io, oid) == std::string("hello") + std::string(3, '\0'));
  REQUIRE(strata_zero(io, oid.c_str(), 1, 2) == 0);
  CHECK(read_all(io, oid) == std::string("h\0\0lo\0\0\0", 8));
  REQUIRE(strata_zero(io, oid.c_str(), 6, 100) == 0);  // clipped: the size stays
  CHECK(stat_of(io, oid).size == 8);

  CHECK(strata_create(io, oid.c_str(), 1) == -EEXIST);
  CHECK(strata_create(io, oid.c_str(), 0) == 0);
  CHECK(strata_create(io, "io.empty", 1) == 0);
  CHECK(stat_of(io, "io.empty").size == 0);

  REQUIRE(strata_remove(io, oid.c_str()) == 0);
  CHECK(stat_rc(io, oid) == -ENOENT);
  CHECK(strata_read(io, oid.c_str(), buf, sizeof buf, 0) == -ENOENT);
  CHECK(strata_remove(io, oid.c_str()) == -ENOENT);

  // A bigger object survives the trip byte for byte.
  std::string big = random_bytes(3 << 20, 7);
  REQUIRE(strata_write_full(io, "io.big", big.data(), big.size()) == 0);
  CHECK(read_all(io, "io.big", 4 << 20) == big);
  CHECK(stat_of(io, "io.big").size == big.size());
}

void api_case_xattrs(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  const char *oid = "xattr.obj";
  const std::string bin("v\0al!", 5);
  REQUIRE(strata_write_full(io, oid, "data", 4) == 0);
  REQUIRE(strata_setxattr(io, oid, "a", "1", 1) == 0);
  REQUIRE(strata_setxattr(io, oid, "b", bin.data(), bin.size()) == 0);
  REQUIRE(strata_setxattr(io, oid, "empty", nullptr, 0) == 0);

  char buf[8] = {};
  CHECK(strata_getxattr(io, oid, "a", buf, sizeof buf) == 1);
  CHECK(buf[0] == '1');
  std::memset(buf, 0, sizeof buf);
  CHECK(strata_getxattr(io, oid, "b", buf, 2) == 5);  // full length, first 2 bytes copied
  CHECK(std::string(buf, 3) == std::string("v\0\0", 3));
  CHECK(strata_getxattr(io, oid, "b", buf, sizeof buf) == 5);
  CHECK(std::string(buf, 5) == bin);
  CHECK(strata_getxattr(io, oid, "empty", buf, sizeof buf) == 0);

  strata_xattr_iter_t it = nullptr;
  REQUIRE(strata_getxattrs(io, oid, &it) == 0);
  std::map<std::string, std::string> got;
  const char *name;
  const void *val;
  size_t len;
  while (strata_xattr_iter_next(it, &name, &val, &len) == 1)
    got[name] = std::string(static_cast<const char *>(val), len);
  CHECK(strata_xattr_iter_next(it, &name, &val, &len) == 0);
  strata_xattr_iter_end(it);
  CHECK(got == std::map<std::string, std::string>{{"a", "1"}, {"b", bin}, {"empty", ""}});

  REQUIRE(strata_rmxattr(io, oid, "a") == 0);
  CHECK(strata_getxattr(io, oid, "a", buf, sizeof buf) == -ENODATA);
  CHECK(strata_rmxattr(io, oid, "a") == -ENODATA);
  CHECK(strata_getxattr(io, "xattr.missing", "a", buf, sizeof buf) == -ENOENT);
  CHECK(strata_setxattr(io, oid, std::string(300, 'n').c_str(), "v", 1) == -EINVAL);
  // Setting an xattr creates the object.
  REQUIRE(strata_setxattr(io, "xattr.created", "k", "v", 1) == 0);
  CHECK(stat_of(io, "xattr.created").size == 0);
}

void api_case_omap(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  const char *oid = "omap.obj";
  std::vector<std::string> keys, vals;
  for (int i = 0; i < 20; ++i) {
    char k[8];
    std::snprintf(k, sizeof k, "k%02d", i);
    keys.push_back(k);
    vals.push_back("value-" + std::to_string(i));
  }
  keys.push_back(std::string("\0bin", 4));
  vals.push_back(std::string("\xff\0", 2));
  std::vector<strata_bytes> kb, vb;
  for (size_t i = 0; i < keys.size(); ++i) {
    kb.push_back(b(keys[i]));
    vb.push_back(b(vals[i]));
  }
  REQUIRE(strata_omap_set(io, oid, kb.data(), vb.data(), kb.size()) == 0);

  std::string missing = "nope";
  std::vector<strata_bytes> want = {b(keys[1]), b(missing), b(keys[20])};
  strata_omap_iter_t it = nullptr;
  REQUIRE(strata_omap_get_keys(io, oid, want.data(), want.size(), &it) == 0);
  CHECK(strata_omap_iter_size(it) == 2);
  auto got = drain(it);
  strata_omap_iter_end(it);
  CHECK(got == std::vector<std::pair<std::string, std::string>>{{keys[20], vals[20]},
                                                                 {keys[1], vals[1]}});

  int more = -1;
  auto every = omap_list(io, oid, "", "", 0, &more);
  REQUIRE(every.size() == 21);
  CHECK(more == 0);
  CHECK(every.front().first == keys[20]);  // "\0bin" sorts first
  CHECK(every.back().first == "k19");

  auto range = omap_list(io, oid, "k05", "k10");
  REQUIRE(range.size() == 4);
  CHECK(range.front().first == "k06");
  CHECK(range.back().first == "k09");

  // Paging with start_after = the last key of the previous page.
  std::vector<std::string> paged;
  std::string after;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = omap_list(io, oid, after, "", 7, &more);
    for (auto &e : page) paged.push_back(e.first);
    if (!more) break;
    CHECK(page.size() == 7);
    after = page.back().first;
  }
  CHECK(paged.size() == 21);

  std::vector<strata_bytes> rm = {b(keys[0]), b(keys[1]), b(missing)};
  REQUIRE(strata_omap_rm_keys(io, oid, rm.data(), rm.size()) == 0);
  CHECK(omap_list(io, oid).size() == 19);
  REQUIRE(strata_omap_rm_range(io, oid, "k10", 3, "k15", 3) == 0);
  auto left = omap_list(io, oid);
  CHECK(left.size() == 14);
  for (auto &e : left) CHECK((e.first < "k10" || e.first >= "k15"));

  char hdr[8] = {};
  CHECK(strata_omap_get_header(io, oid, hdr, sizeof hdr) == 0);
  REQUIRE(strata_omap_set_header(io, oid, "header!", 7) == 0);
  CHECK(strata_omap_get_header(io, oid, hdr, 3) == 7);
  CHECK(std::string(hdr, 3) == "hea");
  CHECK(strata_omap_get_header(io, oid, hdr, sizeof hdr) == 7);
  CHECK(std::string(hdr, 7) == "header!");

  REQUIRE(strata_omap_clear(io, oid) == 0);
  CHECK(omap_list(io, oid).empty());
  CHECK(strata_omap_get_header(io, oid, hdr, sizeof hdr) == 7);  // the header stays

  CHECK(strata_omap_list(io, "omap.missing", nullptr, 0, nullptr, 0, 0, &it) == -ENOENT);
  CHECK(strata_omap_clear(io, "omap.missing") == -ENOENT);
}

void api_case_write_op(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  const char *oid = "wop.obj";
  std::string one = "1";
  strata_bytes k = b(one), v = b(one);

  strata_write_op_t op = strata_write_op_new();
  strata_write_op_create(op, 1);
  strata_write_op_write_full(op, "base", 4);
  strata_write_op_setxattr(op, "state", "a", 1);
  strata_write_op_omap_set(op, &k, &v, 1);
  strata_write_op_omap_set_header(op, "H", 1);
  CHECK(strata_write_op_size(op) == 5);
  uint64_t v1 = 0;
  REQUIRE(strata_write_op_operate(op, io, oid, &v1) == 0);
  CHECK(v1 > 0);
  CHECK(stat_of(io, oid).version == v1);
  // The same op again: the exclusive create fails it, nothing changes.
  CHECK(strata_write_op_operate(op, io, oid, nullptr) == -EEXIST);
  CHECK(stat_of(io, oid).version == v1);
  strata_write_op_release(op);

  // A failing guard: nothing of the op is applied.
  op = strata_write_op_new();
  strata_write_op_cmpxattr(op, "state", STRATA_CMP_EQ, "b", 1);
  strata_write_op_write_full(op, "changed", 7);
  strata_write_op_setxattr(op, "other", "x", 1);
  CHECK(strata_write_op_operate(op, io, oid, nullptr) == -ECANCELED);
  strata_write_op_release(op);
  CHECK(read_all(io, oid) == "base");
  char buf[16];
  CHECK(strata_getxattr(io, oid, "other", buf, sizeof buf) == -ENODATA);

  // Compare-and-write on the version and an xattr.
  op = strata_write_op_new();
  strata_write_op_assert_version(op, v1);
  strata_write_op_cmpxattr(op, "state", STRATA_CMP_LT, "b", 1);  // "a" < "b"
  strata_write_op_write_full(op, "v2", 2);
  strata_write_op_setxattr(op, "state", "b", 1);
  uint64_t v2 = 0;
  REQUIRE(strata_write_op_operate(op, io, oid, &v2) == 0);
  CHECK(v2 > v1);
  // The same op now sees a newer version: -ERANGE, nothing applied.
  CHECK(strata_write_op_operate(op, io, oid, nullptr) == -ERANGE);
  strata_write_op_release(op);
  CHECK(read_all(io, oid) == "v2");
  CHECK(stat_of(io, oid).version == v2);

  // assert_exists on a missing object: no write, no object.
  op = strata_write_op_new();
  strata_write_op_assert_exists(op);
  strata_write_op_write_full(op, "x", 1);
  CHECK(strata_write_op_operate(op, io, "wop.missing", nullptr) == -ENOENT);
  strata_write_op_release(op);
  CHECK(stat_rc(io, "wop.missing") == -ENOENT);
  // A missing object has version 0 for assert_version.
  op = strata_write_op_new();
  strata_write_op_assert_version(op, 0);
  strata_write_op_create(op, 1);
  CHECK(strata_write_op_operate(op, io, "wop.fresh", nullptr) == 0);
  strata_write_op_release(op);

  // Many steps in one op.
  op = strata_write_op_new();
  strata_write_op_append(op, "-tail", 5);
  strata_write_op_write(op, "V", 1, 0);
  strata_write_op_zero(op, 1, 1);
  strata_write_op_rmxattr(op, "state");
  strata_write_op_omap_clear(op);
  std::string two = "2";
  strata_bytes k2 = b(two);
  strata_write_op_omap_set(op, &k2, &k2, 1);
  strata_write_op_omap_rm_range(op, "0", 1, "2", 1);
  strata_write_op_omap_set_header(op, "HH", 2);
  REQUIRE(strata_write_op_operate(op, io, oid, nullptr) == 0);
  strata_write_op_release(op);
  CHECK(read_all(io, oid) == std::string("V\0-tail", 7));
  CHECK(strata_getxattr(io, oid, "state", buf, sizeof buf) == -ENODATA);
  auto om = omap_list(io, oid);
  REQUIRE(om.size() == 1);
  CHECK(om[0].first == "2");
  CHECK(strata_omap_get_header(io, oid, buf, sizeof buf) == 2);

  op = strata_write_op_new();
  strata_write_op_truncate(op, 1);
  strata_write_op_remove(op);
  REQUIRE(strata_write_op_operate(op, io, oid, nullptr) == 0);
  strata_write_op_release(op);
  CHECK(stat_rc(io, oid) == -ENOENT);

  // Argument errors surface at operate; an empty op is a no-op.
  op = strata_write_op_new();
  strata_write_op_setxattr(op, nullptr, "v", 1);
  CHECK(strata_write_op_operate(op, io, oid, nullptr) == -EINVAL);
  strata_write_op_release(op);
  op = strata_write_op_new();
  uint64_t ver = 99;
  CHECK(strata_write_op_operate(op, io, oid, &ver) == 0);
  CHECK(ver == 0);
  strata_write_op_release(op);
}

void api_case_read_op(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  const char *oid = "rop.obj";
  REQUIRE(strata_write_full(io, oid, "0123456789", 10) == 0);
  REQUIRE(strata_setxattr(io, oid, "x", "y", 1) == 0);
  std::string ka = "a", kb2 = "b", kc = "c", v1 = "1", v2 = "2", v3 = "3";
  strata_bytes ks[] = {b(ka), b(kb2), b(kc)}, vs[] = {b(v1), b(v2), b(v3)};
  REQUIRE(strata_omap_set(io, oid, ks, vs, 3) == 0);
  REQUIRE(strata_omap_set_header(io, oid, "H", 1) == 0);
  uint64_t version = stat_of(io, oid).version;

  strata_read_op_t op = strata_read_op_new();
  char data[8] = {}, xv[4] = {}, hdr[4] = {};
  size_t n_read = 0, xlen = 0, hlen = 0;
  int p_read = 1, p_stat = 1, p_x = 1, p_xs = 1, p_keys = 1, p_list = 1, p_hdr = 1;
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  strata_xattr_iter_t xit = nullptr;
  strata_omap_iter_t kit = nullptr, lit = nullptr;
  strata_bytes wanted[] = {b(ka), b(kc)};
  strata_read_op_assert_exists(op);
  strata_read_op_assert_version(op, version);
  strata_read_op_cmpxattr(op, "x", STRATA_CMP_EQ, "y", 1);
  strata_read_op_read(op, 2, 3, data, &n_read, &p_read);
  strata_read_op_stat(op, &st, &p_stat);
  strata_read_op_getxattr(op, "x", xv, sizeof xv, &xlen, &p_x);
  strata_read_op_getxattrs(op, &xit, &p_xs);
  strata_read_op_omap_get_keys(op, wanted, 2, &kit, &p_keys);
  strata_read_op_omap_list(op, "a", 1, nullptr, 0, 10, &lit, &p_list);
  strata_read_op_omap_get_header(op, hdr, sizeof hdr, &hlen, &p_hdr);
  CHECK(strata_read_op_size(op) == 10);
  uint64_t got_version = 0;
  REQUIRE(strata_read_op_operate(op, io, oid, &got_version) == 0);
  CHECK(got_version == version);
  CHECK((p_read | p_stat | p_x | p_xs | p_keys | p_list | p_hdr) == 0);
  CHECK(std::string(data, n_read) == "234");
  CHECK(st.size == 10);
  CHECK(st.version == version);
  CHECK(std::string(xv, xlen) == "y");
  REQUIRE(xit);
  const char *xn;
  const void *xval;
  size_t xl;
  CHECK(strata_xattr_iter_next(xit, &xn, &xval, &xl) == 1);
  CHECK(std::string(xn) == "x");
  strata_xattr_iter_end(xit);
  REQUIRE(kit);
  CHECK(strata_omap_iter_size(kit) == 2);
  strata_omap_iter_end(kit);
  REQUIRE(lit);
  auto listed = drain(lit);
  strata_omap_iter_end(lit);
  CHECK(listed == std::vector<std::pair<std::string, std::string>>{{"b", "2"}, {"c", "3"}});
  CHECK(std::string(hdr, hlen) == "H");
  strata_read_op_release(op);

  // A failing guard ends the op; later steps report -ECANCELED.
  op = strata_read_op_new();
  p_read = 1;
  int p_guard = 1;
  strata_read_op_assert_version(op, version + 1000);
  strata_read_op_read(op, 0, 4, data, &n_read, &p_read);
  CHECK(strata_read_op_operate(op, io, oid, nullptr) == -ERANGE);
  CHECK(p_read == -ECANCELED);
  strata_read_op_release(op);

  op = strata_read_op_new();
  strata_read_op_getxattr(op, "nope", xv, sizeof xv, &xlen, &p_guard);
  strata_read_op_stat(op, &st, &p_stat);
  CHECK(strata_read_op_operate(op, io, oid, nullptr) == -ENODATA);
  CHECK(p_guard == -ENODATA);
  CHECK(p_stat == -ECANCELED);
  strata_read_op_release(op);

  op = strata_read_op_new();
  strata_read_op_read(op, 0, 4, data, &n_read, &p_read);
  CHECK(strata_read_op_operate(op, io, "rop.missing", nullptr) == -ENOENT);
  CHECK(p_read == -ENOENT);
  strata_read_op_release(op);
}

namespace {

struct AioCounter {
  std::atomic<int> calls{0};
  std::atomic<int> deadlock_seen{0};
  strata_ioctx_t io = nullptr;
};

}  // namespace

void api_case_aio(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  constexpr int kN = 32;
  AioCounter counter;
  counter.io = io;
  std::vector<strata_completion_t> comps(kN);
  std::vector<std::string> payloads;
  for (int i = 0; i < kN; ++i) payloads.push_back("aio payload " + std::to_string(i));
  for (int i = 0; i < kN; ++i) {
    REQUIRE(strata_completion_create(
                [](strata_completion_t, void *arg) {
                  static_cast<AioCounter *>(arg)->calls++;
                },
                &counter, &comps[size_t(i)]) == 0);
    std::string oid = "aio." + std::to_string(i);
    std::string data = payloads[size_t(i)];
    REQUIRE(strata_aio_write_full(io, oid.c_str(), comps[size_t(i)], data.data(), data.size()) ==
            0);
    data.assign(data.size(), '#');  // the library copied it already
  }
  REQUIRE(strata_aio_flush(io) == 0);
  CHECK(counter.calls == kN);
  for (auto c : comps) {
    CHECK(strata_completion_is_complete(c) == 1);
    CHECK(strata_completion_get_return_value(c) == 0);
    CHECK(strata_completion_get_version(c) > 0);
    CHECK(strata_completion_wait(c) == 0);
    strata_completion_release(c);
  }

  // Reads into caller buffers, released before they complete.
  std::vector<std::string> bufs(kN, std::string(64, '\0'));
  std::vector<strata_completion_t> reads(kN);
  for (int i = 0; i < kN; ++i) {
    REQUIRE(strata_completion_create(nullptr, nullptr, &reads[size_t(i)]) == 0);
    std::string oid = "aio." + std::to_string(i);
    REQUIRE(strata_aio_read(io, oid.c_str(), reads[size_t(i)], bufs[size_t(i)].data(), 64, 0) ==
            0);
  }
  for (int i = 0; i < kN; ++i) {
    int64_t n = strata_completion_wait(reads[size_t(i)]);
    REQUIRE(n == int64_t(payloads[size_t(i)].size()));
    CHECK(bufs[size_t(i)].substr(0, size_t(n)) == payloads[size_t(i)]);
    strata_completion_release(reads[size_t(i)]);
  }

  // stat, append, remove, write op and read op, asynchronously.
  strata_completion_t c = nullptr;
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  REQUIRE(strata_completion_create(nullptr, nullptr, &c) == 0);
  REQUIRE(strata_aio_stat(io, "aio.0", c, &st) == 0);
  CHECK(strata_completion_wait(c) == 0);
  CHECK(st.size == payloads[0].size());
  CHECK(st.version == strata_completion_get_version(c));
  // A completion serves one call.
  CHECK(strata_aio_stat(io, "aio.0", c, &st) == -EBUSY);
  strata_completion_release(c);

  REQUIRE(strata_completion_create(nullptr, nullptr, &c) == 0);
  REQUIRE(strata_aio_append(io, "aio.0", c, "+", 1) == 0);
  CHECK(strata_completion_wait(c) == 0);
  strata_completion_release(c);
  CHECK(read_all(io, "aio.0") == payloads[0] + "+");

  strata_write_op_t wop = strata_write_op_new();
  strata_write_op_setxattr(wop, "k", "v", 1);
  strata_write_op_append(wop, "++", 2);
  REQUIRE(strata_completion_create(nullptr, nullptr, &c) == 0);
  REQUIRE(strata_aio_write_op_operate(wop, io, "aio.1", c) == 0);
  strata_write_op_release(wop);  // allowed once the call has started
  CHECK(strata_completion_wait(c) == 0);
  strata_completion_release(c);
  CHECK(read_all(io, "aio.1") == payloads[1] + "++");

  strata_read_op_t rop = strata_read_op_new();
  char xv[4];
  size_t xl = 0;
  int pr = 1;
  strata_obj_stat rst{};
  rst.struct_size = sizeof rst;
  strata_read_op_getxattr(rop, "k", xv, sizeof xv, &xl, &pr);
  strata_read_op_stat(rop, &rst, nullptr);
  REQUIRE(strata_completion_create(nullptr, nullptr, &c) == 0);
  REQUIRE(strata_aio_read_op_operate(rop, io, "aio.1", c) == 0);
  CHECK(strata_completion_wait(c) == 0);
  CHECK(pr == 0);
  CHECK(std::string(xv, xl) == "v");
  CHECK(rst.version == strata_completion_get_version(c));
  strata_completion_release(c);
  strata_read_op_release(rop);

  REQUIRE(strata_completion_create(nullptr, nullptr, &c) == 0);
  REQUIRE(strata_aio_remove(io, "aio.2", c) == 0);
  CHECK(strata_completion_wait(c) == 0);
  strata_completion_release(c);
  REQUIRE(strata_completion_create(nullptr, nullptr, &c) == 0);
  REQUIRE(strata_aio_read(io, "aio.2", c, bufs[0].data(), 8, 0) == 0);
  CHECK(strata_completion_wait(c) == -ENOENT);
  strata_completion_release(c);

  // A synchronous call inside a callback would wait for its own thread.
  REQUIRE(strata_completion_create(
              [](strata_completion_t comp, void *arg) {
                auto *ctr = static_cast<AioCounter *>(arg);
                char b1[4];
                if (strata_read(ctr->io, "aio.3", b1, sizeof b1, 0) == -EDEADLK &&
                    strata_completion_wait(comp) == -EDEADLK && strata_aio_flush(ctr->io) == -EDEADLK)
                  ctr->deadlock_seen++;
                // Starting another asynchronous call is fine.
                strata_completion_t next = nullptr;
                strata_completion_create(nullptr, nullptr, &next);
                if (strata_aio_write_full(ctr->io, "aio.from-callback", next, "cb", 2) == 0)
                  ctr->deadlock_seen++;
                strata_completion_release(next);
              },
              &counter, &c) == 0);
  REQUIRE(strata_aio_stat(io, "aio.3", c, &st) == 0);
  CHECK(strata_completion_wait(c) == 0);
  strata_completion_release(c);
  REQUIRE(strata_aio_flush(io) == 0);
  CHECK(counter.deadlock_seen == 2);
  CHECK(read_all(io, "aio.from-callback") == "cb");
}

void api_case_listing(ApiEnv &env) {
  // A pool of its own, so that other cases' objects do not interfere.
  std::string pool = env.pool + "-list";
  strata_pool_args pa{};
  pa.struct_size = sizeof pa;
  pa.size = 1;
  pa.min_size = 1;
  pa.pg_num = 8;
  int rc = strata_pool_create(env.cluster, pool.c_str(), &pa);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  Io io(env.cluster, pool);
  std::set<std::string> want;
  for (int i = 0; i < 60; ++i) {
    std::string oid = "list." + std::to_string(i);
    REQUIRE(strata_write_full(io, oid.c_str(), "x", 1) == 0);
    want.insert(oid);
  }

  strata_list_t l = nullptr;
  REQUIRE(strata_list_open(io, nullptr, &l) == 0);
  std::multiset<std::string> got;
  const char *name;
  size_t len;
  while ((rc = strata_list_next(l, &name, &len)) == 1) {
    CHECK(std::strlen(name) == len);
    got.insert(name);
  }
  CHECK(rc == 0);
  strata_list_close(l);
  CHECK(std::set<std::string>(got.begin(), got.end()) == want);
  CHECK(got.size() == want.size());

  // Stop after 25, resume from the cursor in a new listing.
  REQUIRE(strata_list_open(io, "", &l) == 0);
  std::vector<std::string> first;
  for (int i = 0; i < 25; ++i) {
    REQUIRE(strata_list_next(l, &name, nullptr) == 1);
    first.push_back(name);
  }
  char cursor[9000];
  int64_t n = strata_list_cursor(l, cursor, sizeof cursor);
  REQUIRE(n > 0);
  REQUIRE(size_t(n) < sizeof cursor);
  strata_list_close(l);
  REQUIRE(strata_list_open(io, cursor, &l) == 0);
  std::multiset<std::string> all(first.begin(), first.end());
  while (strata_list_next(l, &name, nullptr) == 1) all.insert(name);
  strata_list_close(l);
  CHECK(all.size() == want.size());
  CHECK(std::set<std::string>(all.begin(), all.end()) == want);

  CHECK(strata_list_open(io, "not a cursor", &l) == -EINVAL);
  CHECK(l == nullptr);
  REQUIRE(strata_pool_delete(env.cluster, pool.c_str()) == 0);
}

void api_case_pools(ApiEnv &env) {
  std::string name = env.pool + "-extra";
  strata_pool_args pa{};
  pa.struct_size = sizeof pa;
  pa.size = 1;
  pa.min_size = 1;
  pa.pg_num = 4;
  int rc = strata_pool_create(env.cluster, name.c_str(), &pa);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  CHECK(strata_pool_create(env.cluster, name.c_str(), &pa) == -EEXIST);
  CHECK(std::string(strata_last_error()).size() > 0);

  int64_t id = strata_pool_lookup(env.cluster, name.c_str());
  REQUIRE(id >= 0);
  strata_pool_info info{};
  info.struct_size = sizeof info;
  REQUIRE(strata_pool_get_info(env.cluster, name.c_str(), &info) == 0);
  CHECK(info.id == uint32_t(id));
  CHECK(info.size == 1);
  CHECK(info.min_size == 1);
  CHECK(info.pg_num == 4);

  // The list protocol: ask for the size, then fetch.
  int64_t need = strata_pool_list(env.cluster, nullptr, 0);
  REQUIRE(need > 1);
  std::string buf(size_t(need), '\x7f');
  CHECK(strata_pool_list(env.cluster, buf.data(), 1) == need);
  CHECK(buf[0] == '\x7f');  // too small: untouched
  REQUIRE(strata_pool_list(env.cluster, buf.data(), buf.size()) == need);
  std::set<std::string> names;
  for (size_t p = 0; p < buf.size() && buf[p];) {
    std::string n(buf.c_str() + p);
    names.insert(n);
    p += n.size() + 1;
  }
  CHECK(names.count(name));
  CHECK(names.count(env.pool));
  CHECK(buf.back() == '\0');

  strata_ioctx_t io = nullptr;
  REQUIRE(strata_ioctx_create_by_id(env.cluster, id, &io) == 0);
  CHECK(strata_ioctx_pool_id(io) == id);
  REQUIRE(strata_write_full(io, "in-extra", "z", 1) == 0);
  CHECK(read_all(io, "in-extra") == "z");

  REQUIRE(strata_pool_delete(env.cluster, name.c_str()) == 0);
  CHECK(strata_pool_lookup(env.cluster, name.c_str()) == -ENOENT);
  CHECK(strata_pool_delete(env.cluster, name.c_str()) == -ENOENT);
  // The ioctx outlives its pool; its calls fail.
  CHECK(strata_write_full(io, "in-extra", "z", 1) == -ENOENT);
  strata_ioctx_destroy(io);
  CHECK(strata_ioctx_create(env.cluster, name.c_str(), &io) == -ENOENT);
  CHECK(strata_ioctx_create_by_id(env.cluster, 999999, &io) == -ENOENT);
}

void api_case_commands(ApiEnv &env) {
  char *msg = nullptr, *json = nullptr;
  size_t msg_len = 0, json_len = 0;
  REQUIRE(strata_mon_command(env.cluster, "status", nullptr, 0, &msg, &msg_len, &json,
                             &json_len) == 0);
  REQUIRE(msg);
  REQUIRE(json);
  CHECK(std::strlen(msg) == msg_len);
  CHECK(json_len > 0);
  CHECK(json[0] == '{');
  strata_buffer_free(msg);
  strata_buffer_free(json);

  strata_cmd_arg args[] = {{"name", env.pool.c_str()}};
  REQUIRE(strata_mon_command(env.cluster, "pool get", args, 1, nullptr, nullptr, &json,
                             nullptr) == 0);
  CHECK(std::string(json).find(env.pool) != std::string::npos);
  strata_buffer_free(json);

  CHECK(strata_mon_command(env.cluster, "no such command", nullptr, 0, &msg, nullptr, nullptr,
                           nullptr) == -EINVAL);
  REQUIRE(msg);
  CHECK(std::strlen(msg) > 0);
  strata_buffer_free(msg);
  strata_buffer_free(nullptr);

  char fsid[64];
  CHECK(strata_cluster_fsid(env.cluster, fsid, sizeof fsid) == 36);
  uint64_t epoch = strata_cluster_map_epoch(env.cluster);
  CHECK(epoch > 0);
  CHECK(strata_cluster_wait_for_epoch(env.cluster, epoch, 1000) == 0);
  CHECK(strata_cluster_wait_for_epoch(env.cluster, epoch + 1000, 50) == -ETIMEDOUT);

  Io io(env.cluster, env.pool);
  strata_object_location loc{};
  loc.struct_size = sizeof loc;
  REQUIRE(strata_object_locate(io, "somewhere", &loc) == 0);
  CHECK(loc.pool == uint32_t(strata_ioctx_pool_id(io)));
  CHECK(loc.primary >= 0);
  REQUIRE(loc.n_acting >= 1);
  CHECK(loc.acting[0] == loc.primary);
  CHECK(loc.epoch > 0);

  REQUIRE(strata_pg_command(env.cluster, loc.pool, loc.seed, STRATA_PG_SCRUB_DEEP, &msg, nullptr,
                            &json, nullptr) == 0);
  CHECK(std::strlen(msg) > 0);
  strata_buffer_free(msg);
  strata_buffer_free(json);
  CHECK(strata_pg_command(env.cluster, loc.pool, loc.seed, 0x80, nullptr, nullptr, nullptr,
                          nullptr) == -EINVAL);
  CHECK(strata_pg_command(env.cluster, loc.pool, 1u << 30, 0, nullptr, nullptr, nullptr,
                          nullptr) == -ENOENT);
}

void api_case_errors(ApiEnv &env) {
  Io io(env.cluster, env.pool);
  char buf[4];
  CHECK(strata_write(io, nullptr, "x", 1, 0) == -EINVAL);
  CHECK(strata_write(nullptr, "x", "x", 1, 0) == -EINVAL);
  CHECK(strata_write(io, "x", nullptr, 1, 0) == -EINVAL);
  CHECK(strata_read(io, "", buf, 4, 0) == -EINVAL);
  CHECK(strata_write_full(io, std::string(4097, 'o').c_str(), "x", 1) == -EINVAL);
  CHECK(std::string(strata_last_error()).find("name") != std::string::npos);
  // More than one operation may carry is refused before anything is read.
  CHECK(strata_write(io, "big", buf, size_t(STRATA_MAX_OP_DATA) + 1, 0) == -E2BIG);
  strata_obj_stat st{};
  st.struct_size = 8;
  CHECK(strata_stat(io, "x", &st) == -EINVAL);
  CHECK(strata_stat(io, "x", nullptr) == -EINVAL);
  strata_omap_iter_t it = nullptr;
  CHECK(strata_omap_get_keys(io, "x", nullptr, 2, &it) == -EINVAL);
  strata_bytes bad{nullptr, 3};
  CHECK(strata_omap_set(io, "x", &bad, &bad, 1) == -EINVAL);
  CHECK(strata_ioctx_create(env.cluster, "no-such-pool", nullptr) == -EINVAL);
  strata_ioctx_t none = nullptr;
  CHECK(strata_ioctx_create(env.cluster, "no-such-pool", &none) == -ENOENT);
  CHECK_THAT(strata_last_error(), Catch::Contains("no-such-pool"));
  CHECK(strata_cluster_conf_set(env.cluster, "mon_addr", "x:1") == -EISCONN);
  CHECK(strata_cluster_connect(env.cluster, 100) == -EISCONN);
}

}  // namespace clienttest
