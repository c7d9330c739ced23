// kv backend, everything but data: xattrs, omap, listing, clone, removal,
// error codes — through the plugin file, both engines.
#include <catch2/catch.hpp>

#include "kv_harness.h"

using namespace strata::test;
using namespace std::string_literals;
using Pairs = KvHarness::Pairs;
using Names = std::vector<std::string>;

TEST_CASE("xattrs and omap entries are visited in bytewise order", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  TxnBuilder t;
  t.mkcoll("c");
  for (std::string k : {"b"s, "\xff"s, "a\0z"s, "a"s, "\x01"s}) {
    t.setxattr("c", "o", k, "x" + k);
    t.omap_set("c", "o", k, "m" + k);
  }
  h.apply(1, t);
  Names order = {"\x01"s, "a"s, "a\0z"s, "b"s, "\xff"s};
  Pairs xs = h.xattrs("c", "o"), om = h.omap("c", "o");
  REQUIRE(xs.size() == order.size());
  REQUIRE(om.size() == order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    CHECK(xs[i] == std::make_pair(order[i], "x" + order[i]));
    CHECK(om[i] == std::make_pair(order[i], "m" + order[i]));
  }
  strata_object_stat st;
  REQUIRE(h.stat_rc("c", "o", &st) == 0);
  CHECK(st.n_xattrs == 5);
}

TEST_CASE("omap iteration honours start_after, end and limit", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  TxnBuilder t;
  t.mkcoll("c");
  for (char k = 'a'; k <= 'h'; ++k) t.omap_set("c", "o", std::string(1, k), "v");
  h.apply(1, t);
  auto keys = [](const Pairs &p) {
    std::string s;
    for (auto &kv : p) s += kv.first;
    return s;
  };
  CHECK(keys(h.omap("c", "o")) == "abcdefgh");
  CHECK(keys(h.omap("c", "o", "c")) == "defgh");
  CHECK(keys(h.omap("c", "o", "c", "f")) == "de");
  CHECK(keys(h.omap("c", "o", "", "c")) == "ab");
  CHECK(keys(h.omap("c", "o", "bb", "", 2)) == "cd");
  CHECK(keys(h.omap("c", "o", "h")).empty());
}

TEST_CASE("omap rm, rm_range and clear remove keys; the header is separate", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  TxnBuilder t;
  t.mkcoll("c").omap_set_header("c", "o", "HDR");
  for (char k = 'a'; k <= 'h'; ++k) t.omap_set("c", "o", std::string(1, k), "v");
  h.apply(1, t);
  h.apply(2, TxnBuilder().omap_rm("c", "o", "a").omap_rm_range("c", "o", "c", "f"));
  std::string left;
  for (auto &kv : h.omap("c", "o")) left += kv.first;
  CHECK(left == "bfgh");
  CHECK(h.omap_get("c", "o", "d") == std::to_string(-ENODATA));
  h.apply(3, TxnBuilder().omap_clear("c", "o"));
  CHECK(h.omap("c", "o").empty());
  CHECK(h.omap_header("c", "o") == "HDR");
  CHECK(h.omap_header("c", "missing") == std::to_string(-ENOENT));
}

TEST_CASE("getxattr and omap_get return -ENODATA for a missing key, -ENOENT for a missing object",
          "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  h.apply(1, TxnBuilder().mkcoll("c").setxattr("c", "o", "long", std::string(1000, 'L')));
  CHECK(h.getxattr("c", "o", "long") == std::string(1000, 'L'));  // asks twice: 1 byte, then 1000
  CHECK(h.getxattr("c", "o", "none") == std::to_string(-ENODATA));
  CHECK(h.getxattr("c", "nobody", "long") == std::to_string(-ENOENT));
  CHECK(h.omap_get("c", "nobody", "k") == std::to_string(-ENOENT));
  CHECK(h.omap_header("c", "o").empty());  // an object without a header has an empty one
  std::string buf;
  CHECK(h.read_rc("c", "nobody", 0, 10, &buf) == -ENOENT);
  CHECK(h.read_rc("nocoll", "o", 0, 10, &buf) == -ENOENT);
  Names out;
  CHECK(h.list_rc("nocoll", "", 0, &out) == -ENOENT);
}

TEST_CASE("objects are listed in bytewise order from a cursor, limit at a time", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  Names names = {"b"s, "a"s, "a\0"s, "a\0\0"s, "\xff\xfe"s, "B"s, "\x01"s, "aa"s};
  TxnBuilder t;
  t.mkcoll("c").mkcoll("c\0"s).mkcoll("d").touch("c\0"s, "other").touch("d", "other");
  for (auto &n : names) t.touch("c", n);
  h.apply(1, t);
  std::sort(names.begin(), names.end());
  CHECK(h.list("c") == names);

  Names paged;
  std::string cursor;
  for (;;) {
    Names page = h.list("c", cursor, 3);
    if (page.empty()) break;
    CHECK(page.size() <= 3);
    paged.insert(paged.end(), page.begin(), page.end());
    cursor = page.back();
  }
  CHECK(paged == names);
  CHECK(h.list("c", "a\0"s, 2) == Names{"a\0\0"s, "aa"s});
  CHECK(h.collections() == Names{"c"s, "c\0"s, "d"s});
}

TEST_CASE("a clone is an independent copy of data, xattrs, omap and header", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"), "4K");
  std::string data(10000, 'd');
  h.apply(1, TxnBuilder()
                 .mkcoll("c")
                 .write("c", "src", 0, data)
                 .setxattr("c", "src", "x", "1")
                 .omap_set("c", "src", "k", "2")
                 .omap_set_header("c", "src", "H")
                 .write("c", "dst", 0, std::string(50000, 'z'))  // replaced entirely
                 .setxattr("c", "dst", "stale", "gone")
                 .clone("c", "src", "dst"));
  CHECK(h.read("c", "dst", 0, 100000) == data);
  CHECK(h.xattrs("c", "dst") == Pairs{{"x", "1"}});
  CHECK(h.omap("c", "dst") == Pairs{{"k", "2"}});
  CHECK(h.omap_header("c", "dst") == "H");

  h.apply(2, TxnBuilder()
                 .write("c", "src", 0, "SRC")
                 .setxattr("c", "src", "x", "changed")
                 .omap_rm("c", "src", "k")
                 .truncate("c", "dst", 5));
  CHECK(h.read("c", "dst", 0, 100) == "ddddd");
  CHECK(h.read("c", "src", 0, 3) == "SRC");
  CHECK(h.size("c", "src") == 10000);
  CHECK(h.getxattr("c", "dst", "x") == "1");
  CHECK(h.omap("c", "dst") == Pairs{{"k", "2"}});
  CHECK(h.fsck() == 0);
}

TEST_CASE("removal ops are no-ops on a missing object; every other op creates it", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  h.apply(1, TxnBuilder()
                 .mkcoll("c")
                 .remove("c", "r1")
                 .rmxattr("c", "r2", "x")
                 .omap_rm("c", "r3", "k")
                 .omap_rm_range("c", "r4", "a", "z")
                 .omap_clear("c", "r5"));
  CHECK(h.list("c").empty());
  CHECK(h.usage().n_objects == 0);
  h.apply(2, TxnBuilder()
                 .touch("c", "t")
                 .setxattr("c", "x", "n", "v")
                 .omap_set("c", "m", "k", "v")
                 .omap_set_header("c", "h", "v")
                 .truncate("c", "tr", 10)
                 .write_full("c", "wf", ""));
  CHECK(h.list("c") == Names{"h", "m", "t", "tr", "wf", "x"});
  CHECK(h.usage().n_objects == 6);
}

TEST_CASE("remove deletes an object entirely, also a large one", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"), "4K");
  TxnBuilder t;
  t.mkcoll("c").write("c", "big", 0, std::string(1 << 20, 'b'));  // 256 chunks
  for (int i = 0; i < 200; ++i) t.omap_set("c", "big", "k" + std::to_string(i), "v");
  t.setxattr("c", "big", "x", "1").write("c", "small", 0, "s");
  h.apply(1, t);
  h.apply(2, TxnBuilder().remove("c", "big"));
  CHECK_FALSE(h.exists("c", "big"));
  // Re-created: nothing of the old object shows through.
  h.apply(3, TxnBuilder().truncate("c", "big", 8192));
  CHECK(h.read("c", "big", 0, 8192) == std::string(8192, '\0'));
  CHECK(h.omap("c", "big").empty());
  CHECK(h.xattrs("c", "big").empty());
  CHECK(h.read("c", "small", 0, 10) == "s");
  CHECK(h.fsck() == 0);
}

TEST_CASE("rmcoll removes the collection and every object in it, and nothing else", "[kv][meta]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  TxnBuilder t;
  t.mkcoll("a").mkcoll("b");
  for (int i = 0; i < 50; ++i) {
    std::string o = "obj" + std::to_string(i);
    t.write("a", o, 0, "data").omap_set("a", o, "k", "v").write("b", o, 0, "keep");
  }
  h.apply(1, t);
  CHECK(h.usage().n_objects == 100);
  h.apply(2, TxnBuilder().rmcoll("a"));
  CHECK(h.collections() == Names{"b"});
  CHECK(h.usage().n_objects == 50);
  CHECK_FALSE(h.exists("a", "obj1"));
  CHECK(h.read("b", "obj1", 0, 10) == "keep");
  // Re-created empty within one transaction with its removal.
  h.apply(3, TxnBuilder().rmcoll("b").mkcoll("b").touch("b", "fresh"));
  CHECK(h.list("b") == Names{"fresh"});
  CHECK(h.usage().n_objects == 1);
  CHECK(h.fsck() == 0);
}
