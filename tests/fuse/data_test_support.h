// What the file data tests share: a real cluster (`strata up`, one OSD on
// the kv backend), a pool in it, and FileData instances over the client
// table of the library this test links (as the fuse plugin gets it from
// its host).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "file_data.h"
#include "process_cluster.h"

namespace datatest {

struct Pool {
  strata_cluster_t cluster = nullptr;
  strata_ioctx_t io = nullptr;
  int64_t id = -1;
};

// The shared cluster of the data tests, made on first use.
strata::testing::ProcessCluster &shared_cluster();

// A connected client with a fresh pool (size 1) named `name`.
Pool make_pool(strata::testing::ProcessCluster &c, const std::string &name);
void close_pool(Pool &p);

std::unique_ptr<strata::fuse::FileData> make_file_data(const Pool &p,
                                                       strata::fuse::FileDataOptions opts = {});

// Whether the data object `objno` of `ino` exists, and its size.
bool object_exists(const Pool &p, uint64_t ino, uint64_t objno, uint64_t *size = nullptr);

std::string pattern(size_t len, uint32_t seed);

// The offset of the first byte where a and b differ (or where the shorter
// ends), -1 when they are equal: a failure message that fits on a line.
int64_t first_difference(const std::string &a, const std::string &b);

}  // namespace datatest
