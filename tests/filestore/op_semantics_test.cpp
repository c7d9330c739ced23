// Each op of objectstore.h, on both backends (and both metadata engines).
#include <catch2/catch.hpp>
#include <string>

#include "store_harness.h"

using strata::test::pattern;
using strata::test::TestStore;
using strata::test::Txn;

namespace {

const std::string C = "pg.1";

std::string backend_under_test() { return GENERATE(as<std::string>{}, "xfs", "btrfs"); }

}  // namespace

TEST_CASE("a write creates the object and extends it and reads back what was written") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).write(C, "a", 0, "hello"));
  CHECK(s.read(C, "a") == "hello");
  s.apply(Txn(2).write(C, "a", 3, "LO world"));
  CHECK(s.read(C, "a") == "helLO world");
  CHECK(s.size(C, "a") == 11);
  CHECK(s.read(C, "a", 6, 100) == "world");
  CHECK(s.read(C, "a", 11, 10) == "");
  CHECK(s.read(C, "a", 50, 10) == "");
}

TEST_CASE("never-written ranges read as zeros") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).write(C, "a", 1 << 20, "x"));
  CHECK(s.size(C, "a") == (1 << 20) + 1);
  std::string expected(1 << 20, '\0');
  expected += "x";
  CHECK(s.read(C, "a") == expected);
}

TEST_CASE("a zero-length write at an offset extends the size") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).write(C, "a", 0, "ab").write(C, "a", 10, ""));
  CHECK(s.size(C, "a") == 10);
  CHECK(s.read(C, "a") == std::string("ab") + std::string(8, '\0'));
}

TEST_CASE("zero punches a hole clipped to the size and never changes the size") {
  TestStore s(backend_under_test());
  std::string data = pattern(256 << 10, 1);
  s.apply(Txn(1).mkcoll(C).write(C, "a", 0, data));
  s.checkpoint(1);
  strata_object_stat before{};
  REQUIRE(s.stat(C, "a", &before) == 0);

  s.apply(Txn(2).zero(C, "a", 64 << 10, 128 << 10).zero(C, "a", 250 << 10, 1 << 20));
  s.checkpoint(2);
  CHECK(s.size(C, "a") == data.size());
  std::string expected = data;
  std::fill(expected.begin() + (64 << 10), expected.begin() + (192 << 10), '\0');
  std::fill(expected.begin() + (250 << 10), expected.end(), '\0');
  CHECK(s.read(C, "a") == expected);
  strata_object_stat after{};
  REQUIRE(s.stat(C, "a", &after) == 0);
  CHECK(after.allocated_bytes < before.allocated_bytes);  // a hole, not written zeros

  SECTION("zero past the end changes nothing") {
    s.apply(Txn(3).zero(C, "a", 1 << 20, 4096));
    CHECK(s.size(C, "a") == data.size());
  }
  SECTION("zero on a missing object creates it empty") {
    s.apply(Txn(3).zero(C, "new", 0, 4096));
    CHECK(s.exists(C, "new"));
    CHECK(s.size(C, "new") == 0);
  }
}

TEST_CASE("truncate shrinks and extends with zeros") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).write(C, "a", 0, "abcdefgh").truncate(C, "a", 3));
  CHECK(s.read(C, "a") == "abc");
  s.apply(Txn(2).truncate(C, "a", 6));
  CHECK(s.read(C, "a") == std::string("abc") + std::string(3, '\0'));
  s.apply(Txn(3).truncate(C, "b", 5));
  CHECK(s.read(C, "b") == std::string(5, '\0'));
}

TEST_CASE("write_full replaces the data and keeps xattrs and omap") {
  TestStore s(backend_under_test());
  s.apply(Txn(1)
              .mkcoll(C)
              .write(C, "a", 0, pattern(100000, 2))
              .setxattr(C, "a", "x", "1")
              .omap_set(C, "a", "k", "v")
              .omap_set_header(C, "a", "h"));
  s.apply(Txn(2).write_full(C, "a", "short"));
  CHECK(s.read(C, "a") == "short");
  CHECK(s.getxattr(C, "a", "x") == "1");
  CHECK(s.omap_get(C, "a", "k") == "v");
  CHECK(s.omap_header(C, "a") == "h");
  s.apply(Txn(3).write_full(C, "a", ""));
  CHECK(s.size(C, "a") == 0);
}

TEST_CASE("touch creates an empty object and leaves an existing one alone") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).touch(C, "a").write(C, "b", 0, "data").touch(C, "b"));
  CHECK(s.read(C, "a") == "");
  CHECK(s.read(C, "b") == "data");
}

TEST_CASE("remove deletes data and xattrs and omap and header and is a no-op when missing") {
  TestStore s(backend_under_test());
  Txn t(1);
  t.mkcoll(C).write(C, "a", 0, "data").omap_set_header(C, "a", "h");
  for (int i = 0; i < 100; ++i) {  // more than the point-delete limit
    t.setxattr(C, "a", "x" + std::to_string(i), "v");
    t.omap_set(C, "a", "k" + std::to_string(i), "v");
  }
  s.apply(t);
  s.apply(Txn(2).remove(C, "a").remove(C, "never"));
  CHECK_FALSE(s.exists(C, "a"));
  CHECK_FALSE(s.exists(C, "never"));
  CHECK(s.read(C, "a") == std::nullopt);
  s.apply(Txn(3).touch(C, "a"));
  CHECK(s.xattrs(C, "a").empty());
  CHECK(s.omap(C, "a").empty());
  CHECK(s.omap_header(C, "a") == "");
}

TEST_CASE("removal-only ops on a missing object do not create it") {
  TestStore s(backend_under_test());
  s.apply(Txn(1)
              .mkcoll(C)
              .rmxattr(C, "a", "x")
              .omap_rm(C, "a", "k")
              .omap_rm_range(C, "a", "a", "z")
              .omap_clear(C, "a")
              .remove(C, "a"));
  CHECK_FALSE(s.exists(C, "a"));
  CHECK(s.list(C).empty());
}

TEST_CASE("xattrs are set and read and listed in bytewise order and removed") {
  TestStore s(backend_under_test());
  std::string big(64 << 10, 'v');
  s.apply(Txn(1)
              .mkcoll(C)
              .setxattr(C, "a", "b", "2")
              .setxattr(C, "a", "a", "1")
              .setxattr(C, "a", std::string("\xff", 1), "3")
              .setxattr(C, "a", "big", big));
  CHECK(s.getxattr(C, "a", "a") == "1");
  CHECK(s.getxattr(C, "a", "big") == big);
  CHECK(s.getxattr(C, "a", "nope") == std::nullopt);
  auto all = s.xattrs(C, "a");
  REQUIRE(all.size() == 4);
  CHECK(all[0].first == "a");
  CHECK(all[1].first == "b");
  CHECK(all[2].first == "big");
  CHECK(all[3].first == "\xff");
  strata_object_stat st{};
  REQUIRE(s.stat(C, "a", &st) == 0);
  CHECK(st.n_xattrs == 4);

  s.apply(Txn(2).rmxattr(C, "a", "b").rmxattr(C, "a", "missing"));
  CHECK(s.getxattr(C, "a", "b") == std::nullopt);
  CHECK(s.xattrs(C, "a").size() == 3);
}

TEST_CASE("a too small buffer gets the full length and nothing copied") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).setxattr(C, "a", "x", "0123456789"));
  char buf[4] = {'-', '-', '-', '-'};
  strata_err e{};
  int64_t n =
      s.ops().getxattr(s.handle(), {C.data(), C.size()}, {"a", 1}, {"x", 1}, buf, sizeof buf, &e);
  CHECK(n == 10);
  CHECK(buf[0] == '-');
}

TEST_CASE("reads of a missing object or collection fail with ENOENT") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C));
  char buf[8];
  CHECK(s.read_raw(C, "nope", 0, 8, buf) == -ENOENT);
  CHECK(s.read_raw("nocoll", "nope", 0, 8, buf) == -ENOENT);
  strata_object_stat st{};
  CHECK(s.stat(C, "nope", &st) == -ENOENT);
  strata_err e{};
  CHECK(s.ops().getxattr(s.handle(), {C.data(), C.size()}, {"nope", 4}, {"x", 1}, nullptr, 0, &e) ==
        -ENOENT);
  CHECK(std::string(e.msg).find("nope") != std::string::npos);
  CHECK(s.ops().omap_get_header(s.handle(), {C.data(), C.size()}, {"nope", 4}, nullptr, 0, &e) ==
        -ENOENT);
  CHECK(s.list_rc("nocoll") == -ENOENT);
}

TEST_CASE("omap entries are set and read and iterated with bounds and limits and removed") {
  TestStore s(backend_under_test());
  Txn t(1);
  t.mkcoll(C);
  for (char k = 'a'; k <= 'j'; ++k) t.omap_set(C, "o", std::string(1, k), std::string(2, k));
  t.omap_set(C, "o", std::string("b\0x", 3), "nul");
  s.apply(t);

  CHECK(s.omap_get(C, "o", "c") == "cc");
  CHECK(s.omap_get(C, "o", "z") == std::nullopt);
  auto all = s.omap(C, "o");
  REQUIRE(all.size() == 11);
  CHECK(all[1].first == "b");
  CHECK(all[2].first == std::string("b\0x", 3));
  CHECK(all[3].first == "c");

  auto page = s.omap(C, "o", "b", "f", 2);
  REQUIRE(page.size() == 2);
  CHECK(page[0].first == std::string("b\0x", 3));
  CHECK(page[1].first == "c");
  auto rest = s.omap(C, "o", "c", "f");
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].first == "d");
  CHECK(rest[1].first == "e");

  s.apply(Txn(2).omap_rm(C, "o", "a").omap_rm_range(C, "o", "c", "f"));
  auto left = s.omap(C, "o");
  REQUIRE(left.size() == 7);
  CHECK(left[0].first == "b");
  CHECK(left[2].first == "f");

  s.apply(Txn(3).omap_set_header(C, "o", "hdr").omap_clear(C, "o"));
  CHECK(s.omap(C, "o").empty());
  CHECK(s.omap_header(C, "o") == "hdr");  // clear keeps the header
}

TEST_CASE("an object without an omap header has an empty one") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).touch(C, "a"));
  CHECK(s.omap_header(C, "a") == "");
}

TEST_CASE("objects are listed in bytewise name order with a cursor") {
  TestStore s(backend_under_test());
  std::vector<std::string> names = {"b",
                                    "a",
                                    std::string("a\0", 2),
                                    std::string("a\0b", 3),
                                    std::string("\xff\xfe", 2),
                                    "ab",
                                    std::string(4096, 'z'),
                                    "A/../..",
                                    std::string("\x01", 1)};
  Txn t(1);
  t.mkcoll(C).mkcoll("other");
  for (const std::string &n : names) t.write(C, n, 0, n);
  t.touch("other", "zzz");
  s.apply(t);

  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  CHECK(s.list(C) == sorted);
  for (const std::string &n : names) CHECK(s.read(C, n) == n);

  std::vector<std::string> paged;
  std::string cursor;
  for (;;) {
    auto page = s.list(C, cursor, 2);
    if (page.empty()) break;
    paged.insert(paged.end(), page.begin(), page.end());
    cursor = page.back();
  }
  CHECK(paged == sorted);

  s.checkpoint(1);  // btrfs rolls back to the last checkpoint on open
  s.reopen();
  CHECK(s.list(C) == sorted);
  CHECK(s.list("other") == std::vector<std::string>{"zzz"});
}

TEST_CASE("rmcoll removes the collection and every object in it") {
  TestStore s(backend_under_test());
  Txn t(1);
  t.mkcoll(C).mkcoll("keep").mkcoll(C);  // mkcoll twice is a no-op
  for (int i = 0; i < 20; ++i) {
    std::string o = "o" + std::to_string(i);
    t.write(C, o, 0, "x").setxattr(C, o, "a", "b").omap_set(C, o, "k", "v");
  }
  t.write("keep", "o1", 0, "kept");
  s.apply(t);
  CHECK(s.usage().n_objects == 21);

  s.apply(Txn(2).rmcoll(C).rmcoll("never-existed"));
  CHECK(s.collections() == std::vector<std::string>{"keep"});
  CHECK(s.list_rc(C) == -ENOENT);
  CHECK(s.read("keep", "o1") == "kept");
  CHECK(s.usage().n_objects == 1);

  s.apply(Txn(3).mkcoll(C));
  CHECK(s.list(C).empty());
  CHECK(s.fsck() == 0);  // no data file left behind
}

TEST_CASE("collections with arbitrary byte names are listed in order") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("b").mkcoll(std::string("a\0", 2)).mkcoll("a"));
  CHECK(s.collections() == std::vector<std::string>{"a", std::string("a\0", 2), "b"});
}

TEST_CASE("everything applied survives a checkpoint and reopen") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll(C).write(C, "a", 0, "one").setxattr(C, "a", "x", "y"));
  s.apply(Txn(2).omap_set(C, "a", "k", "v").write(C, "b", 5, "two"));
  s.checkpoint(2);
  CHECK(s.committed_seq() == 2);
  std::string before = s.dump();
  s.reopen();
  CHECK(s.committed_seq() == 2);
  CHECK_SAME_STATE(s.dump(), before);
  CHECK(s.usage().n_objects == 2);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a fresh store has committed seq 0 and reports usage") {
  TestStore s(backend_under_test());
  CHECK(s.committed_seq() == 0);
  strata_store_usage u = s.usage();
  CHECK(u.total_bytes > 0);
  CHECK(u.used_bytes <= u.total_bytes);
  CHECK(u.n_objects == 0);
}

TEST_CASE("both backends advertise their capabilities") {
  std::string backend = backend_under_test();
  TestStore s(backend);
  uint64_t caps = s.capabilities();
  CHECK((caps & STRATA_OS_CAP_STAGED_WRITES) != 0);
  CHECK((caps & STRATA_OS_CAP_CHEAP_CLONE) != 0);  // the loop images support reflink
  CHECK((caps & STRATA_OS_CAP_SELF_DURABLE) == 0);
  if (backend == "btrfs") {
    CHECK((caps & STRATA_OS_CAP_ROLLBACK_CHECKPOINT) != 0);
    CHECK((caps & STRATA_OS_CAP_EXACT_REPLAY) != 0);
  } else {
    CHECK((caps & STRATA_OS_CAP_ROLLBACK_CHECKPOINT) == 0);
    CHECK((caps & STRATA_OS_CAP_EXACT_REPLAY) == 0);
  }
}

TEST_CASE("the metadata can live in LevelDB instead of RocksDB") {
  TestStore s(backend_under_test(), {{"meta_engine", "leveldb"}});
  s.apply(Txn(1).mkcoll(C).write(C, "a", 0, "data").omap_set(C, "a", "k", "v"));
  s.apply(Txn(2).remove(C, "a").write(C, "b", 0, "bee"));
  s.checkpoint(2);
  s.reopen();
  CHECK(s.list(C) == std::vector<std::string>{"b"});
  CHECK(s.read(C, "b") == "bee");
  CHECK(s.fsck() == 0);
}
