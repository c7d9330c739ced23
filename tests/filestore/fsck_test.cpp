// fsck: the object index against the data files.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "store_harness.h"

using namespace strata::test;
namespace fs = std::filesystem;

namespace {

std::string backend_under_test() { return GENERATE(as<std::string>{}, "xfs", "btrfs"); }

std::vector<fs::path> data_files(const TestStore &s) {
  std::vector<fs::path> files;
  for (const auto &e : fs::recursive_directory_iterator(s.live_dir() + "/data"))
    if (e.is_regular_file()) files.push_back(e.path());
  return files;
}

}  // namespace

TEST_CASE("fsck finds nothing wrong in a healthy store") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c").write("c", "a", 0, "x").write("c", "b", 100, "y").touch("c", "e"));
  CHECK(s.fsck() == 0);
  CHECK(s.log().contains("0 problems"));
}

TEST_CASE("fsck reports a data file that was deleted behind the store's back") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c").write("c", "victim", 0, "data"));
  s.checkpoint(1);
  s.reopen();  // no descriptor of the file left open
  std::vector<fs::path> files = data_files(s);
  REQUIRE(files.size() == 1);
  fs::remove(files[0]);
  CHECK(s.fsck() == 1);
  CHECK(s.log().contains("missing"));
  CHECK(s.log().contains("victim"));
  char buf[4];
  CHECK(s.read_raw("c", "victim", 0, 4, buf) == -EIO);
}

TEST_CASE("fsck reports orphan data files and size mismatches") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c").write("c", "a", 0, "data"));
  std::vector<fs::path> files = data_files(s);
  REQUIRE(files.size() == 1);
  fs::resize_file(files[0], 1000);
  std::ofstream(files[0].parent_path() / "00000000000003e7.0") << "orphan";
  std::ofstream(files[0].parent_path() / "not-a-data-file") << "stray";
  CHECK(s.fsck() == 3);
  CHECK(s.log().contains("has 1000 bytes, the index says 4"));
  CHECK(s.log().contains("00000000000003e7.0"));
  CHECK(s.log().contains("not-a-data-file"));
}
