// CLONE: the destination becomes an independent copy of everything.
#include <catch2/catch.hpp>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "snap";

// A store holding "src" with data, xattrs, omap and a header.
struct CloneStore : FreshStore {
  std::string data = pattern_bytes(200000, 21);
  CloneStore() {
    apply(TxnBuilder()
              .mkcoll(kColl)
              .write(kColl, "src", 0, data)
              .setxattr(kColl, "src", "x1", "one")
              .setxattr(kColl, "src", "x2", "two")
              .omap_set(kColl, "src", "k1", "v1")
              .omap_set(kColl, "src", "k2", "v2")
              .omap_set_header(kColl, "src", "header"));
  }
  void check_is_original(std::string_view oid) const {
    INFO("object " << oid);
    CHECK(same_bytes(read_all(kColl, oid), data));
    CHECK(getxattrs(kColl, oid) == KvList{{"x1", "one"}, {"x2", "two"}});
    CHECK(omap(kColl, oid) == KvList{{"k1", "v1"}, {"k2", "v2"}});
    CHECK(omap_header(kColl, oid) == "header");
  }
};

TEST_CASE("a clone copies data, xattrs, omap and header", "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  s.check_is_original("dst");
  s.check_is_original("src");
  CHECK(s.list_objects(kColl) == NameList{"dst", "src"});
}

TEST_CASE("changing a clone leaves its source unchanged", "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  s.apply(TxnBuilder()
              .write(kColl, "dst", 100, "overwritten")
              .zero(kColl, "dst", 70000, 5000)
              .setxattr(kColl, "dst", "x1", "changed")
              .rmxattr(kColl, "dst", "x2")
              .omap_set(kColl, "dst", "k3", "v3")
              .omap_rm(kColl, "dst", "k1")
              .omap_set_header(kColl, "dst", "other"));
  s.apply(TxnBuilder().truncate(kColl, "dst", 1000));
  s.check_is_original("src");
  CHECK(s.size(kColl, "dst") == 1000);
}

TEST_CASE("changing the source leaves an earlier clone unchanged", "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  s.apply(TxnBuilder()
              .write(kColl, "src", 0, pattern_bytes(300000, 22))
              .setxattr(kColl, "src", "x3", "three")
              .omap_clear(kColl, "src")
              .omap_set_header(kColl, "src", "new header"));
  s.check_is_original("dst");
}

TEST_CASE("removing the source leaves the clone intact", "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  s.apply(TxnBuilder().remove(kColl, "src"));
  s.check_is_original("dst");
  CHECK_FALSE(s.exists(kColl, "src"));
}

TEST_CASE("a clone replaces everything the destination held", "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder()
              .write(kColl, "dst", 0, pattern_bytes(900000, 23))
              .setxattr(kColl, "dst", "stale", "1")
              .omap_set(kColl, "dst", "stale", "1")
              .omap_set_header(kColl, "dst", "stale"));
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  s.check_is_original("dst");
}

TEST_CASE("a clone of a sparse object keeps its holes reading as zeros", "[backend][clone]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll(kColl)
              .write(kColl, "src", 0, "head")
              .write(kColl, "src", 4 << 20, "tail"));
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  CHECK(s.size(kColl, "dst") == (4u << 20) + 4);
  CHECK(same_bytes(s.read(kColl, "dst", 4, 1 << 20), std::string(1 << 20, '\0')));
  CHECK(same_bytes(s.read(kColl, "dst", 4 << 20, 4), "tail"));
}

TEST_CASE("writes after a clone in the same transaction affect only their target",
          "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder().clone(kColl, "src", "dst").write(kColl, "dst", 0, "dst only"));
  s.check_is_original("src");
  CHECK(same_bytes(s.read(kColl, "dst", 0, 8), "dst only"));
}

TEST_CASE("a clone and its source stay independent after checkpoint and reopen",
          "[backend][clone]") {
  CloneStore s;
  s.apply(TxnBuilder().clone(kColl, "src", "dst"));
  s.checkpoint();
  s.reopen();
  s.apply(TxnBuilder().write(kColl, "dst", 0, "after reopen").omap_set(kColl, "dst", "k9", "v9"));
  s.check_is_original("src");
  CHECK(same_bytes(s.read(kColl, "dst", 0, 12), "after reopen"));
}

}  // namespace
