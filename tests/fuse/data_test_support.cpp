#include "data_test_support.h"

#include <catch2/catch.hpp>

#include "client/client_api_table.h"
#include "data_objects.h"
#include "strata/client.h"

namespace datatest {

using strata::testing::ProcessCluster;

ProcessCluster &shared_cluster() {
  static ProcessCluster cluster(1);
  return cluster;
}

Pool make_pool(ProcessCluster &c, const std::string &name) {
  Pool p;
  p.cluster = c.connect();
  strata_pool_args a{};
  a.struct_size = sizeof a;
  a.size = 1;
  a.min_size = 1;
  a.pg_num = 8;
  int rc = strata_pool_create(p.cluster, name.c_str(), &a);
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  REQUIRE(strata_ioctx_create(p.cluster, name.c_str(), &p.io) == 0);
  p.id = strata_ioctx_pool_id(p.io);
  REQUIRE(p.id >= 0);
  return p;
}

void close_pool(Pool &p) {
  strata_ioctx_destroy(p.io);
  strata_cluster_shutdown(p.cluster);
  p = Pool{};
}

std::unique_ptr<strata::fuse::FileData> make_file_data(const Pool &p,
                                                       strata::fuse::FileDataOptions opts) {
  auto fd = strata::fuse::FileData::create(strata::client::client_api_table(), p.cluster, opts);
  REQUIRE(fd);
  return fd;
}

bool object_exists(const Pool &p, uint64_t ino, uint64_t objno, uint64_t *size) {
  strata_obj_stat st{};
  st.struct_size = sizeof st;
  int rc = strata_stat(p.io, strata::fuse::data_object_name(ino, objno).c_str(), &st);
  if (rc == -ENOENT) return false;
  INFO(strata_last_error());
  REQUIRE(rc == 0);
  if (size) *size = st.size;
  return true;
}

std::string pattern(size_t len, uint32_t seed) {
  std::string s(len, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>((x >> 16) | 1);  // never 0: a hole shows
  }
  return s;
}

int64_t first_difference(const std::string &a, const std::string &b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  return a.size() == b.size() ? -1 : static_cast<int64_t>(n);
}

}  // namespace datatest
