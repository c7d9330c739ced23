// CLONE: an independent copy that shares extents (reflink) on both backends.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "store_harness.h"

using namespace strata::test;

namespace {
std::string backend_under_test() { return GENERATE(as<std::string>{}, "xfs", "btrfs"); }
}  // namespace

TEST_CASE("a clone is an independent copy of data and xattrs and omap and header") {
  TestStore s(backend_under_test());
  std::string data = pattern(300000, 1);
  s.apply(Txn(1)
              .mkcoll("c")
              .write("c", "src", 0, data)
              .zero("c", "src", 65536, 65536)
              .setxattr("c", "src", "x", "1")
              .omap_set("c", "src", "k", "v")
              .omap_set_header("c", "src", "h"));
  s.checkpoint(1);
  s.apply(Txn(2).clone("c", "src", "dst"));
  s.checkpoint(2);
  std::fill(data.begin() + 65536, data.begin() + 131072, '\0');
  CHECK(s.read("c", "dst") == data);
  CHECK(s.xattrs("c", "dst") == s.xattrs("c", "src"));
  CHECK(s.omap("c", "dst") == s.omap("c", "src"));
  CHECK(s.omap_header("c", "dst") == "h");

  s.apply(Txn(3)
              .write("c", "src", 0, "changed")
              .truncate("c", "src", 10)
              .setxattr("c", "src", "x", "2")
              .omap_set("c", "src", "k2", "v2")
              .write("c", "dst", 299990, "tail-bytes"));
  CHECK(s.read("c", "src") == "changed" + data.substr(7, 3));
  std::string dst = data;
  dst.replace(299990, 10, "tail-bytes");
  CHECK(s.read("c", "dst") == dst);
  CHECK(s.getxattr("c", "dst", "x") == "1");
  CHECK(s.omap_get("c", "dst", "k2") == std::nullopt);
  CHECK(s.usage().n_objects == 2);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a clone onto an existing object replaces all of it") {
  TestStore s(backend_under_test());
  s.apply(Txn(1)
              .mkcoll("c")
              .write("c", "src", 0, "source")
              .write("c", "dst", 0, pattern(50000, 2))
              .setxattr("c", "dst", "old", "1")
              .omap_set("c", "dst", "old", "1")
              .omap_set_header("c", "dst", "old"));
  s.checkpoint(1);
  s.apply(Txn(2).clone("c", "src", "dst"));
  CHECK(s.read("c", "dst") == "source");
  CHECK(s.xattrs("c", "dst").empty());
  CHECK(s.omap("c", "dst").empty());
  CHECK(s.omap_header("c", "dst") == "");
  CHECK(s.usage().n_objects == 2);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a clone onto itself changes nothing") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c").write("c", "a", 0, "same").omap_set("c", "a", "k", "v"));
  s.checkpoint(1);
  s.apply(Txn(2).clone("c", "a", "a"));
  CHECK(s.read("c", "a") == "same");
  CHECK(s.omap_get("c", "a", "k") == "v");
}

TEST_CASE("a clone shares extents instead of copying them") {
  TestStore s(backend_under_test());
  const size_t size = 64 << 20;
  Txn t(1);
  t.mkcoll("c");
  for (size_t off = 0; off < size; off += 4 << 20) t.write("c", "big", off, pattern(4 << 20, off));
  s.apply(t);
  s.checkpoint(1);
  s.apply(Txn(2).clone("c", "big", "copy"));
  s.checkpoint(2);
  std::vector<std::string> files = files_under(s.live_dir() + "/data");
  REQUIRE(files.size() == 2);
  for (const std::string &f : files) {
    INFO(f);
    CHECK(shared_fraction(f) == 1.0);
  }
  CHECK(s.read("c", "copy", size - 5, 5) == s.read("c", "big", size - 5, 5));
}
