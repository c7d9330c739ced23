// mkfs and open: file-system checks, existing stores, the store lock, the
// btrfs snapshot layout.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "store_harness.h"

using namespace strata::test;
namespace fs = std::filesystem;

TEST_CASE("mkfs refuses a directory that already holds a store") {
  TestStore s(GENERATE(as<std::string>{}, "xfs", "btrfs"));
  std::string err;
  CHECK(s.try_mkfs(&err) == -EEXIST);
  CHECK(err.find(s.dir()) != std::string::npos);
}

TEST_CASE("the xfs backend refuses another file system unless allow_any_fs is set") {
  PluginHandle xfs("xfs");
  ScratchDir dir(mount_point("btrfs"));
  std::string err;
  CHECK(xfs.mkfs(dir.path(), {}, &err) == -EINVAL);
  CHECK(err.find("needs XFS") != std::string::npos);
  CHECK(err.find("btrfs") != std::string::npos);
  CHECK(xfs.mkfs(dir.path(), {{"allow_any_fs", "true"}}, &err) == 0);
  strata_objectstore *os = nullptr;
  CHECK(xfs.open(dir.path(), {}, &os, &err) == -EINVAL);
  REQUIRE(xfs.open(dir.path(), {{"allow_any_fs", "true"}}, &os, &err) == 0);
  xfs.ops().close(os);
}

TEST_CASE("the btrfs backend refuses a file system that is not btrfs") {
  PluginHandle btrfs("btrfs");
  ScratchDir dir(mount_point("xfs"));
  std::string err;
  CHECK(btrfs.mkfs(dir.path(), {}, &err) == -EINVAL);
  CHECK(err.find("needs btrfs") != std::string::npos);
}

TEST_CASE("a store made by one backend is refused by the other") {
  TestStore s("btrfs");
  s.close();
  PluginHandle xfs("xfs");
  strata_objectstore *os = nullptr;
  std::string err;
  CHECK(xfs.open(s.dir(), {{"allow_any_fs", "true"}}, &os, &err) == -EINVAL);
  CHECK(err.find("made by the btrfs backend") != std::string::npos);
  s.open();
}

TEST_CASE("opening a directory without a store fails with ENOENT") {
  std::string backend = GENERATE(as<std::string>{}, "xfs", "btrfs");
  PluginHandle plugin(backend);
  ScratchDir dir(mount_point(backend));
  strata_objectstore *os = nullptr;
  std::string err;
  CHECK(plugin.open(dir.path(), {}, &os, &err) == -ENOENT);
  CHECK(os == nullptr);
  CHECK(err.find("mkfs") != std::string::npos);
}

TEST_CASE("a store that is open cannot be opened a second time") {
  TestStore s(GENERATE(as<std::string>{}, "xfs", "btrfs"));
  s.apply(Txn(1).mkcoll("c").touch("c", "a"));
  strata_objectstore *second = nullptr;
  std::string err;
  PluginHandle plugin(s.backend());
  CHECK(plugin.open(s.dir(), {}, &second, &err) == -EBUSY);
  CHECK(err.find("already open") != std::string::npos);
  CHECK(s.exists("c", "a"));  // the first instance was not disturbed
}

TEST_CASE("a btrfs store keeps one snapshot named after the last checkpoint") {
  TestStore s("btrfs");
  auto snapshots = [&] {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(s.dir()))
      if (e.path().filename().string().rfind("snap.", 0) == 0)
        names.push_back(e.path().filename().string());
    return names;
  };
  CHECK(snapshots() == std::vector<std::string>{"snap.0"});
  s.apply(Txn(5).mkcoll("c").write("c", "a", 0, "x"));
  s.checkpoint(5);
  CHECK(snapshots() == std::vector<std::string>{"snap.5"});
  s.checkpoint(5);  // nothing applied since: no new snapshot
  CHECK(snapshots() == std::vector<std::string>{"snap.5"});
  s.apply(Txn(9).write("c", "a", 0, "y"));
  s.checkpoint(9);
  CHECK(snapshots() == std::vector<std::string>{"snap.9"});
}

TEST_CASE("a closed btrfs store can be removed with a plain recursive delete") {
  TestStore s("btrfs");
  s.apply(Txn(1).mkcoll("c").write("c", "a", 0, "x"));
  s.checkpoint(1);
  s.close();
  std::error_code ec;
  fs::remove_all(s.dir(), ec);
  CHECK_FALSE(ec);
  CHECK_FALSE(fs::exists(s.dir()));
}

TEST_CASE("a transaction at or below the committed seq is not applied again") {
  TestStore s(GENERATE(as<std::string>{}, "xfs", "btrfs"));
  s.apply(Txn(1).mkcoll("c").write("c", "a", 0, "first"));
  s.checkpoint(1);
  s.apply(Txn(1).write("c", "a", 0, "again"));
  CHECK(s.read("c", "a") == "first");
}
