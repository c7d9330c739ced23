// Staged writes (ABI 1.1): stage_write, WRITE_STAGED, stage lifetime.

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "store_harness.h"

using namespace strata::test;
namespace fs = std::filesystem;

namespace {

std::string backend_under_test() { return GENERATE(as<std::string>{}, "xfs", "btrfs"); }

size_t stage_files(const TestStore &s) {
  size_t n = 0;
  for ([[maybe_unused]] const auto &e : fs::directory_iterator(s.dir() + "/stage")) ++n;
  return n;
}

}  // namespace

TEST_CASE("a staged write replaces the data and keeps xattrs and omap") {
  TestStore s(backend_under_test());
  s.apply(Txn(1)
              .mkcoll("c")
              .write("c", "a", 0, pattern(5000, 1))
              .setxattr("c", "a", "x", "1")
              .omap_set("c", "a", "k", "v")
              .omap_set_header("c", "a", "h"));
  std::string data = pattern((4 << 20) + 123, 2);
  uint64_t id = s.stage(data);
  s.apply(
      Txn(2).write_staged("c", "a", id, data.size()).write_staged("c", "new", s.stage("tiny"), 4));
  CHECK(s.read("c", "a") == data);
  CHECK(s.getxattr("c", "a", "x") == "1");
  CHECK(s.omap_get("c", "a", "k") == "v");
  CHECK(s.omap_header("c", "a") == "h");
  CHECK(s.read("c", "new") == "tiny");
  CHECK(s.usage().n_objects == 2);

  s.apply(Txn(3).write("c", "a", 10, "changed"));
  data.replace(10, 7, "changed");
  CHECK(s.read("c", "a") == data);
  s.checkpoint(3);
  s.reopen();
  CHECK(s.read("c", "a") == data);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a consumed stage stays until the next checkpoint and unused stages are released") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c"));
  uint64_t used = s.stage(pattern(100000, 1));
  uint64_t unused = s.stage(pattern(1000, 2));
  CHECK(used != unused);
  CHECK(stage_files(s) == 2);

  s.apply(Txn(2).write_staged("c", "a", used, 100000));
  s.release_unused();  // keeps the consumed stage: replay may bind it again
  CHECK(stage_files(s) == 1);
  s.checkpoint(2);
  CHECK(stage_files(s) == 0);
  CHECK(s.read("c", "a") == pattern(100000, 1));
}

TEST_CASE("stage ids stay unique across a reopen") {
  TestStore s(backend_under_test());
  std::set<uint64_t> ids;
  for (int i = 0; i < 3; ++i) ids.insert(s.stage("x"));
  s.reopen();
  for (int i = 0; i < 3; ++i) ids.insert(s.stage("y"));
  CHECK(ids.size() == 6);
}

TEST_CASE("re-applying a staged write binds the same stage again") {
  TestStore s(backend_under_test());
  std::string data = pattern(300000, 3);
  uint64_t id = s.stage(data);
  Txn t2(2);
  t2.write_staged("c", "a", id, data.size()).write("c", "a", 0, "head");
  s.apply(Txn(1).mkcoll("c"));
  s.apply(t2);
  s.apply(Txn(3).truncate("c", "a", 1000));
  const std::string final_state = s.dump();
  s.apply(t2);
  s.apply(Txn(3).truncate("c", "a", 1000));
  CHECK_SAME_STATE(s.dump(), final_state);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a staged write applied after a btrfs rollback binds the stage again") {
  TestStore s("btrfs");
  s.apply(Txn(1).mkcoll("c"));
  s.checkpoint(1);
  std::string data = pattern(2 << 20, 4);
  uint64_t id = s.stage(data);
  Txn t2(2);
  t2.write_staged("c", "a", id, data.size());
  s.apply(t2);
  s.reopen();  // rolls back to seq 1; the stage lives outside the snapshots
  CHECK_FALSE(s.exists("c", "a"));
  s.apply(t2);
  CHECK(s.read("c", "a") == data);
}

TEST_CASE("a staged write moves no bytes: the data file shares the stage's extents") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c"));
  uint64_t id = s.stage(pattern(1 << 20, 5));
  s.apply(Txn(2).write_staged("c", "a", id, 1 << 20));

  std::vector<std::string> files = files_under(s.live_dir() + "/data");
  REQUIRE(files.size() == 1);
  CHECK(shared_fraction(files[0]) == 1.0);
  CHECK(s.read("c", "a") == pattern(1 << 20, 5));
}

TEST_CASE("large reads return the same bytes cached, uncached and across the end of the object") {
  // Reads of 1 MiB and more copy what the page cache holds and read the rest
  // with O_DIRECT through an aligned buffer; a staged object is written with
  // O_DIRECT, so its pages start uncached. Offsets and lengths here are
  // deliberately not block-aligned.
  TestStore s(backend_under_test());
  std::string staged = pattern((9 << 20) + 777, 7);
  std::string buffered = pattern((3 << 20) + 5, 8);
  s.apply(Txn(1).mkcoll("c").write("c", "buffered", 0, buffered));
  s.apply(Txn(2).write_staged("c", "staged", s.stage(staged), staged.size()));
  struct Range {
    uint64_t off, len;
  };
  for (Range r : {Range{0, staged.size()}, Range{4097, (2 << 20) + 3}, Range{1, 8 << 20},
                  Range{staged.size() - (1 << 20) - 10, 4 << 20}}) {
    INFO("staged object, offset " << r.off << " length " << r.len);
    auto got = s.read("c", "staged", r.off, r.len);
    REQUIRE(got);
    CHECK(*got == staged.substr(r.off, r.len));
  }
  auto whole = s.read("c", "buffered", 0, 8 << 20);
  REQUIRE(whole);
  CHECK(*whole == buffered);
  auto tail = s.read("c", "buffered", 12345, 3 << 20);
  REQUIRE(tail);
  CHECK(*tail == buffered.substr(12345));
}

TEST_CASE("a released stage's file is deleted at once; a consumed one is refused") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c"));
  size_t before = stage_files(s);
  uint64_t dropped = s.stage(pattern(300000, 3));
  uint64_t used = s.stage(pattern(300000, 4));
  CHECK(stage_files(s) == before + 2);
  CHECK(s.release_stage(dropped) == 0);
  CHECK(stage_files(s) == before + 1);
  s.apply(Txn(2).write_staged("c", "o", used, 300000));
  CHECK(s.release_stage(used) == -EINVAL);
  CHECK(s.read("c", "o") == pattern(300000, 4));
}
