#include "image_test_support.h"

#include <catch2/catch.hpp>
#include <future>

#include "client/client_api_table.h"
#include "image_format.h"
#include "strata/client.h"

namespace imagetest {

using strata::testing::ProcessCluster;

ProcessCluster &shared_cluster() {
  static ProcessCluster cluster(1);
  return cluster;
}

const strata_client_api *api() { return strata::client::client_api_table(); }

TestPool::TestPool(const std::string &pool_name) : name(pool_name) {
  cluster = shared_cluster().connect();
  strata_pool_args a{};
  a.struct_size = sizeof a;
  a.size = 1;
  a.min_size = 1;
  a.pg_num = 8;
  const int rc = strata_pool_create(cluster, name.c_str(), &a);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  REQUIRE(strata_ioctx_create(cluster, name.c_str(), &io) == 0);
  store = std::make_unique<strata::rbd::ImageStore>(api(), io, name, cluster);
}

TestPool::~TestPool() {
  store.reset();
  strata_ioctx_destroy(io);
  strata_cluster_shutdown(cluster);
}

std::unique_ptr<strata::rbd::Image> TestPool::open(const std::string &image,
                                                   strata::rbd::OpenOptions opts) {
  return strata::rbd::Image::open(api(), cluster, name, image, opts);
}

bool TestPool::object_exists(const std::string &oid, uint64_t *size) {
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  const int rc = strata_stat(io, oid.c_str(), &st);
  if (rc == -ENOENT) return false;
  INFO(oid << ": " << strata_last_error());
  REQUIRE(rc == 0);
  if (size) *size = st.size;
  return true;
}

std::string TestPool::data_oid(const std::string &image, uint64_t objno) {
  return strata::rbd::format::data_oid(store->info(image).id, objno);
}

std::vector<strata_snap_clone> TestPool::snap_clones(const std::string &oid, uint64_t *seq) {
  std::vector<strata_snap_clone> clones(16);
  for (;;) {
    uint64_t s = 0;
    size_t n = 0;
    int prval = 0;
    strata_read_op_t op = strata_read_op_new();
    strata_read_op_list_snaps(op, &s, clones.data(), clones.size(), &n, &prval);
    const int rc = strata_read_op_operate(op, io, oid.c_str(), nullptr);
    strata_read_op_release(op);
    INFO(oid << ": " << strata_last_error());
    REQUIRE(rc == 0);
    REQUIRE(prval == 0);
    if (n > clones.size()) {
      clones.resize(n);
      continue;
    }
    clones.resize(n);
    if (seq) *seq = s;
    return clones;
  }
}

std::vector<std::string> TestPool::list_objects() {
  strata_list_t l = nullptr;
  REQUIRE(strata_list_open(io, nullptr, &l) == 0);
  std::vector<std::string> names;
  const char *oid = nullptr;
  size_t len = 0;
  int rc;
  while ((rc = strata_list_next(l, &oid, &len)) == 1) names.emplace_back(oid, len);
  strata_list_close(l);
  REQUIRE(rc == 0);
  return names;
}

strata::rbd::OpenOptions read_only_opts() {
  strata::rbd::OpenOptions o;
  o.read_only = true;
  return o;
}

strata::rbd::OpenOptions described(const std::string &lock_description) {
  strata::rbd::OpenOptions o;
  o.lock_description = lock_description;
  return o;
}

namespace {
// Runs start(done) and waits for done's result.
template <class F>
int wait_for(F &&start) {
  auto p = std::make_shared<std::promise<int>>();
  auto f = p->get_future();
  start([p](int rc) { p->set_value(rc); });
  return f.get();
}
}  // namespace

int read_sync(strata::rbd::Image &img, uint64_t off, uint64_t len, std::string *out) {
  out->assign(len, '\xee');
  return wait_for([&](strata::rbd::Done d) { img.read(off, len, out->data(), d); });
}

int write_sync(strata::rbd::Image &img, uint64_t off, const std::string &data) {
  // FUA: answered once durable, so what the tests look at next (objects,
  // snapshots) has it. Plain writes may be answered early (write_back.h).
  return wait_for([&](strata::rbd::Done d) { img.write(off, data.size(), data.data(), true, d); });
}

int discard_sync(strata::rbd::Image &img, uint64_t off, uint64_t len) {
  return wait_for([&](strata::rbd::Done d) { img.discard(off, len, false, d); });
}

int zeroes_sync(strata::rbd::Image &img, uint64_t off, uint64_t len) {
  return wait_for([&](strata::rbd::Done d) { img.write_zeroes(off, len, true, false, d); });
}

int flush_sync(strata::rbd::Image &img) {
  return wait_for([&](strata::rbd::Done d) { img.flush(d); });
}

std::string pattern(size_t len, uint32_t seed) {
  std::string s(len, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>((x >> 16) | 1);
  }
  return s;
}

int64_t first_difference(const std::string &a, const std::string &b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

}  // namespace imagetest
