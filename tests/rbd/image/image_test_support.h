// What the image tests share: one real cluster per test binary (one OSD,
// kv backend), a pool per test, the client table of the linked client
// library (as the rbd plugin gets its host's), and synchronous wrappers
// around the asynchronous BlockDevice calls.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "image.h"
#include "process_cluster.h"
#include "strata/cpp/plugin_support.hpp"

namespace imagetest {

strata::testing::ProcessCluster &shared_cluster();
const strata_client_api *api();

// A connected client with a fresh pool (size 1) named `name`; closed on
// destruction.
struct TestPool {
  explicit TestPool(const std::string &name);
  ~TestPool();
  strata_cluster_t cluster = nullptr;
  strata_ioctx_t io = nullptr;
  std::string name;
  std::unique_ptr<strata::rbd::ImageStore> store;

  std::unique_ptr<strata::rbd::Image> open(const std::string &image,
                                           strata::rbd::OpenOptions opts = {});
  bool object_exists(const std::string &oid, uint64_t *size = nullptr);
  // The data object objno of image `image`.
  std::string data_oid(const std::string &image, uint64_t objno);
  // The OSD's snap set of an object (client API 1.3 list_snaps): its
  // clones, oldest first; *seq the snapshot it was last preserved for.
  std::vector<strata_snap_clone> snap_clones(const std::string &oid, uint64_t *seq = nullptr);
  // Every object name the pool lists.
  std::vector<std::string> list_objects();
};

strata::rbd::OpenOptions read_only_opts();
strata::rbd::OpenOptions described(const std::string &lock_description);

// Each returns the request's result; write_sync's is a FUA write (durable
// when answered).
int read_sync(strata::rbd::Image &img, uint64_t off, uint64_t len, std::string *out);
int write_sync(strata::rbd::Image &img, uint64_t off, const std::string &data);
int discard_sync(strata::rbd::Image &img, uint64_t off, uint64_t len);
int zeroes_sync(strata::rbd::Image &img, uint64_t off, uint64_t len);
int flush_sync(strata::rbd::Image &img);

// Bytes never 0 (so a hole shows), different per seed.
std::string pattern(size_t len, uint32_t seed);
// Offset of the first difference, -1 when equal.
int64_t first_difference(const std::string &a, const std::string &b);

// The errno an administrative call throws (0 when it does not throw).
template <class F>
int error_of(F &&f) {
  try {
    f();
  } catch (const strata::sdk::Error &e) {
    return e.code();
  }
  return 0;
}

}  // namespace imagetest
