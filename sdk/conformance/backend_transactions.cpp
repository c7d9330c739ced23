// Transactions as a whole, collections, and which ops create objects.
#include <catch2/catch.hpp>
#include <cerrno>
#include <set>

#include "kit.h"

namespace {
using namespace strata::conformance;

std::set<std::string> as_set(const NameList &names) { return {names.begin(), names.end()}; }

TEST_CASE("every op of a multi-op transaction is visible after apply", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll("c1")
              .mkcoll("c2")
              .write("c1", "a", 0, "alpha")
              .write("c1", "b", 0, "beta")
              .setxattr("c1", "a", "x", "1")
              .omap_set("c1", "b", "k", "v")
              .omap_set_header("c1", "b", "hdr")
              .touch("c2", "z")
              .truncate("c2", "z", 7));
  CHECK(as_set(s.list_collections()) == std::set<std::string>{"c1", "c2"});
  CHECK(s.list_objects("c1") == NameList{"a", "b"});
  CHECK(s.list_objects("c2") == NameList{"z"});
  CHECK(same_bytes(s.read_all("c1", "a"), "alpha"));
  CHECK(same_bytes(s.read_all("c1", "b"), "beta"));
  CHECK(s.getxattr("c1", "a", "x") == "1");
  CHECK(s.omap_get("c1", "b", "k") == "v");
  CHECK(s.omap_header("c1", "b") == "hdr");
  CHECK(s.size("c2", "z") == 7);
}

TEST_CASE("ops within one transaction apply in the order given", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll("c")
              .write("c", "o", 0, "0123456789")
              .truncate("c", "o", 4)
              .write("c", "o", 6, "xy")
              .setxattr("c", "o", "gone", "1")
              .rmxattr("c", "o", "gone")
              .setxattr("c", "o", "kept", "1")
              .setxattr("c", "o", "kept", "2")
              .omap_set("c", "o", "old", "1")
              .omap_clear("c", "o")
              .omap_set("c", "o", "new", "2"));
  CHECK(same_bytes(s.read_all("c", "o"), std::string("0123\0\0xy", 8)));
  CHECK(s.getxattrs("c", "o") == KvList{{"kept", "2"}});
  CHECK(s.omap("c", "o") == KvList{{"new", "2"}});
}

TEST_CASE("an object removed and written again in one transaction is a fresh object",
          "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, "old data").setxattr("c", "o", "x", "1"));
  s.apply(TxnBuilder().remove("c", "o").write("c", "o", 0, "new"));
  CHECK(same_bytes(s.read_all("c", "o"), "new"));
  CHECK(s.getxattrs("c", "o").empty());
}

TEST_CASE("an object written and removed in one transaction does not exist afterwards",
          "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, "data").remove("c", "o"));
  CHECK_FALSE(s.exists("c", "o"));
  CHECK(s.list_objects("c").empty());
}

TEST_CASE("creating an existing collection again keeps its objects", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, "data"));
  s.apply(TxnBuilder().mkcoll("c"));
  CHECK(same_bytes(s.read_all("c", "o"), "data"));
}

TEST_CASE("removing a collection removes every object in it", "[backend][txn]") {
  FreshStore s;
  TxnBuilder t;
  t.mkcoll("doomed").mkcoll("kept");
  for (int i = 0; i < 50; ++i) {
    std::string name = "o" + std::to_string(i);
    t.write("doomed", name, 0, name)
        .setxattr("doomed", name, "x", "1")
        .omap_set("doomed", name, "k", "v");
  }
  t.write("kept", "o1", 0, "survivor");
  s.apply(t);
  s.apply(TxnBuilder().rmcoll("doomed"));
  CHECK(s.list_collections() == NameList{"kept"});
  CHECK(Errno(s.list_objects_rc("doomed", {}, 0)) == Errno(-ENOENT));
  CHECK(Errno(s.stat_rc("doomed", "o1")) == Errno(-ENOENT));
  CHECK(same_bytes(s.read_all("kept", "o1"), "survivor"));
  // Created again, the collection is empty: nothing of the old objects lingers.
  s.apply(TxnBuilder().mkcoll("doomed"));
  CHECK(s.list_objects("doomed").empty());
  CHECK(Errno(s.stat_rc("doomed", "o1")) == Errno(-ENOENT));
}

TEST_CASE("a collection removed and created again in one transaction is empty", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, "data"));
  s.apply(TxnBuilder().rmcoll("c").mkcoll("c"));
  CHECK(s.list_collections() == NameList{"c"});
  CHECK(s.list_objects("c").empty());
}

TEST_CASE("removing a collection that does not exist changes nothing", "[backend][txn]") {
  // Replay re-applies removals whose collection is already gone.
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, "data"));
  s.apply(TxnBuilder().rmcoll("never-made"));
  CHECK(s.list_collections() == NameList{"c"});
  CHECK(same_bytes(s.read_all("c", "o"), "data"));
}

TEST_CASE("list_collections shows exactly the collections that exist, binary names included",
          "[backend][txn]") {
  FreshStore s;
  std::set<std::string> names = {"pg.1",     "pg.2",       std::string("\0bin", 4),
                                 "\xff\xfe", "with space", "a/b"};
  TxnBuilder t;
  for (const std::string &n : names) t.mkcoll(n);
  s.apply(t);
  CHECK(as_set(s.list_collections()) == names);
  CHECK(s.list_collections().size() == names.size());
  s.apply(TxnBuilder().rmcoll("pg.2"));
  names.erase("pg.2");
  CHECK(as_set(s.list_collections()) == names);
}

TEST_CASE("ops that only remove things do not create a missing object", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll("c")
              .remove("c", "a")
              .rmxattr("c", "b", "x")
              .omap_rm("c", "d", "k")
              .omap_rm_range("c", "e", "a", "z")
              .omap_clear("c", "f"));
  for (const char *o : {"a", "b", "d", "e", "f"}) {
    INFO("object " << o);
    CHECK_FALSE(s.exists("c", o));
  }
  CHECK(s.list_objects("c").empty());
}

TEST_CASE("ops that set something create a missing object", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll("c")
              .touch("c", "touch")
              .write("c", "write", 3, "x")
              .write_full("c", "write_full", "xy")
              .truncate("c", "truncate", 9)
              .zero("c", "zero", 0, 10)
              .setxattr("c", "setxattr", "n", "v")
              .omap_set("c", "omap_set", "k", "v")
              .omap_set_header("c", "omap_set_header", "h"));
  CHECK(s.size("c", "touch") == 0);
  CHECK(s.size("c", "write") == 4);
  CHECK(s.size("c", "write_full") == 2);
  CHECK(s.size("c", "truncate") == 9);
  CHECK(s.size("c", "zero") == 0);
  CHECK(s.size("c", "setxattr") == 0);
  CHECK(s.size("c", "omap_set") == 0);
  CHECK(s.size("c", "omap_set_header") == 0);
  CHECK(s.list_objects("c").size() == 8);
}

TEST_CASE("object names may hold any bytes, up to 4096 of them", "[backend][txn]") {
  FreshStore s;
  std::vector<std::string> names = {std::string("\0", 1),
                                    std::string("a\0b", 3),
                                    "a/b",
                                    "../escape",
                                    ".",
                                    "..",
                                    "\xff\xff",
                                    "\x80\x01\x7f",
                                    " leading space",
                                    "new\nline",
                                    std::string(4096, 'n'),
                                    pattern_bytes(4096, 77)};
  TxnBuilder t;
  t.mkcoll("c");
  for (size_t i = 0; i < names.size(); ++i)
    t.write("c", names[i], 0, "content " + std::to_string(i));
  s.apply(t);
  for (size_t i = 0; i < names.size(); ++i) {
    INFO("name #" << i);
    CHECK(same_bytes(s.read_all("c", names[i]), "content " + std::to_string(i)));
  }
  std::set<std::string> expect(names.begin(), names.end());
  CHECK(as_set(s.list_all_objects("c")) == expect);
  CHECK(s.list_all_objects("c").size() == names.size());
}

TEST_CASE("objects with the same name in different collections are independent", "[backend][txn]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll("c1")
              .mkcoll("c2")
              .write("c1", "o", 0, "one")
              .write("c2", "o", 0, "two")
              .setxattr("c1", "o", "x", "1"));
  s.apply(TxnBuilder().remove("c2", "o"));
  CHECK(same_bytes(s.read_all("c1", "o"), "one"));
  CHECK(s.getxattr("c1", "o", "x") == "1");
  CHECK_FALSE(s.exists("c2", "o"));
}

TEST_CASE("a long transaction of a thousand ops applies completely", "[backend][txn]") {
  FreshStore s;
  TxnBuilder t;
  t.mkcoll("c");
  for (int i = 0; i < 1000; ++i)
    t.omap_set("c", "o", "key" + std::to_string(1000 + i), std::to_string(i));
  s.apply(t);
  KvList all = s.omap("c", "o");
  REQUIRE(all.size() == 1000);
  CHECK(all.front() == std::make_pair(std::string("key1000"), std::string("0")));
  CHECK(all.back() == std::make_pair(std::string("key1999"), std::string("999")));
}

}  // namespace
