// Tests of the test support itself: the reference model follows
// objectstore.h, the generator is deterministic and covers the op mix, and
// the comparator names the first difference. If these were wrong, the store
// and crash tests would prove nothing.
#include <catch2/catch.hpp>
#include <set>

#include "store_compare.h"
#include "store_model.h"
#include "txn_gen.h"

namespace strata::testing {
namespace {

using store::Transaction;

const ObjectState &obj(const Model &m, const std::string &c, const std::string &o) {
  const auto &colls = m.state().collections;
  REQUIRE(colls.count(c));
  REQUIRE(colls.at(c).count(o));
  return colls.at(c).at(o);
}

bool exists(const Model &m, const std::string &c, const std::string &o) {
  const auto &colls = m.state().collections;
  return colls.count(c) && colls.at(c).count(o);
}

Model with_collection() {
  Model m;
  REQUIRE(m.apply(std::move(Transaction().mkcoll("c"))).ok());
  return m;
}

TEST_CASE("the model extends with zeros, truncates and zeroes like objectstore.h says",
          "[support]") {
  Model m = with_collection();
  REQUIRE(m.apply(std::move(Transaction().write("c", "o", 4, "abc"))).ok());
  CHECK(obj(m, "c", "o").data == std::string("\0\0\0\0abc", 7));
  REQUIRE(m.apply(std::move(Transaction().truncate("c", "o", 10))).ok());
  CHECK(obj(m, "c", "o").data == std::string("\0\0\0\0abc\0\0\0", 10));
  REQUIRE(m.apply(std::move(Transaction().truncate("c", "o", 5))).ok());
  CHECK(obj(m, "c", "o").data == std::string("\0\0\0\0a", 5));
  // zero is clipped to the size and never changes it
  REQUIRE(
      m.apply(std::move(Transaction().write_full("c", "o", "xyzxyz").zero("c", "o", 4, 100))).ok());
  CHECK(obj(m, "c", "o").data == std::string("xyzx\0\0", 6));
  REQUIRE(m.apply(std::move(Transaction().zero("c", "o", 50, 10))).ok());
  CHECK(obj(m, "c", "o").data.size() == 6);
  // appends land at the size as of the previous op
  REQUIRE(m.apply(std::move(Transaction().append("c", "o", "12").append("c", "o", "3"))).ok());
  CHECK(obj(m, "c", "o").data == std::string("xyzx\0\0"
                                             "123",
                                             9));
}

TEST_CASE("the model creates objects on every op but remove, rmxattr and omap removals",
          "[support]") {
  Model m = with_collection();
  REQUIRE(m.apply(std::move(Transaction()
                                .remove("c", "a")
                                .rmxattr("c", "b", "x")
                                .omap_rm("c", "d", "k")
                                .omap_clear("c", "e")
                                .omap_rm_range("c", "f", "a", "z")))
              .ok());
  CHECK(m.state().collections.at("c").empty());
  REQUIRE(
      m.apply(std::move(Transaction().zero("c", "z", 0, 10).omap_set_header("c", "h", "H"))).ok());
  CHECK(exists(m, "c", "z"));
  CHECK(obj(m, "c", "z").data.empty());
  CHECK(obj(m, "c", "h").header == "H");
}

TEST_CASE("the model keeps xattrs and omap across write_full and removes omap ranges",
          "[support]") {
  Model m = with_collection();
  Transaction t;
  t.setxattr("c", "o", "x", "1").omap_set("c", "o", "a", "1").omap_set("c", "o", "b", "2");
  t.omap_set("c", "o", "c", "3").omap_set_header("c", "o", "hdr").write_full("c", "o", "data");
  REQUIRE(m.apply(std::move(t)).ok());
  CHECK(obj(m, "c", "o").xattrs.at("x") == "1");
  REQUIRE(m.apply(std::move(Transaction().omap_rm_range("c", "o", "a", "c"))).ok());
  CHECK(obj(m, "c", "o").omap == std::map<std::string, std::string>{{"c", "3"}});
  REQUIRE(m.apply(std::move(Transaction().omap_clear("c", "o"))).ok());
  CHECK(obj(m, "c", "o").omap.empty());
  CHECK(obj(m, "c", "o").header == "hdr");
  REQUIRE(m.apply(std::move(Transaction().remove("c", "o"))).ok());
  CHECK_FALSE(exists(m, "c", "o"));
}

TEST_CASE("a clone in the model is an independent copy", "[support]") {
  Model m = with_collection();
  REQUIRE(m.apply(std::move(Transaction()
                                .write("c", "src", 0, "hello")
                                .setxattr("c", "src", "x", "1")
                                .omap_set("c", "src", "k", "v")
                                .omap_set_header("c", "src", "h")
                                .setxattr("c", "dst", "old", "gone")
                                .clone("c", "src", "dst")
                                .write("c", "src", 0, "J")))
              .ok());
  CHECK(obj(m, "c", "dst").data == "hello");
  CHECK(obj(m, "c", "src").data == "Jello");
  CHECK(obj(m, "c", "dst").xattrs == std::map<std::string, std::string>{{"x", "1"}});
  CHECK(obj(m, "c", "dst").omap.at("k") == "v");
  CHECK(obj(m, "c", "dst").header == "h");
}

TEST_CASE("the model rejects a transaction into a missing collection as a whole", "[support]") {
  Model m = with_collection();
  StoreState before = m.state();
  Status st = m.apply(std::move(Transaction().write("c", "a", 0, "x").touch("nope", "b")));
  CHECK(st.code() == -ENOENT);
  CHECK(m.state() == before);
  st = m.apply(std::move(Transaction().mkcoll("n").touch("n", "b").rmcoll("n").touch("n", "c")));
  CHECK(st.code() == -ENOENT);
  CHECK(m.state() == before);
  CHECK(m.apply(std::move(Transaction().mkcoll("n").touch("n", "b"))).ok());
  CHECK(exists(m, "n", "b"));
  CHECK(m.apply(std::move(Transaction().rmcoll("n"))).ok());
  CHECK(m.state() == before);
}

TEST_CASE("the generator is deterministic and covers the op mix", "[support]") {
  TxnGenerator gen;
  std::map<uint32_t, int> seen;
  int large = 0;
  for (uint64_t k = 1; k <= 400; ++k) {
    Transaction a = gen.txn(k), b = gen.txn(k);
    REQUIRE(a.encode() == b.encode());
    REQUIRE_FALSE(a.empty());
    const strata_op &lastop = a.ops().back();
    CHECK(lastop.type == STRATA_OP_SETXATTR);
    CHECK(std::string(lastop.object.data, lastop.object.len) == kCounterObject);
    CHECK(std::string(lastop.value.data, lastop.value.len) == std::to_string(k));
    for (const strata_op &op : a.ops()) {
      seen[op.type]++;
      if (op.type == STRATA_OP_WRITE_FULL && op.value.len >= 128 * 1024) ++large;
    }
  }
  CHECK(gen.txn(1).ops()[0].type == STRATA_OP_MKCOLL);
  CHECK(gen.txn(2).encode() != gen.txn(3).encode());
  TxnGenerator other(GenConfig{.seed = 7});
  CHECK(other.txn(5).encode() != gen.txn(5).encode());
  for (uint32_t type : {STRATA_OP_TOUCH, STRATA_OP_WRITE, STRATA_OP_WRITE_FULL, STRATA_OP_TRUNCATE,
                        STRATA_OP_ZERO, STRATA_OP_REMOVE, STRATA_OP_SETXATTR, STRATA_OP_RMXATTR,
                        STRATA_OP_OMAP_SET, STRATA_OP_OMAP_RM, STRATA_OP_OMAP_CLEAR,
                        STRATA_OP_OMAP_RM_RANGE, STRATA_OP_OMAP_SET_HEADER, STRATA_OP_CLONE})
    CHECK(seen[type] > 0);
  CHECK(seen[store::kOpAppend] > 0);
  CHECK(large > 0);

  Model m;
  Status st = gen.advance(m, 1, 400);
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(m.state().collections.size() == 2);
  CHECK(m.state().object_count() > 10);
}

TEST_CASE("the comparator names the first difference", "[support]") {
  StoreState a;
  a.collections["c"]["o"].data = "hello";
  a.collections["c"]["o"].xattrs["x"] = "1";
  a.collections["c"]["o"].omap["k"] = "v";
  a.collections["c"]["o"].header = "h";
  CHECK(first_difference(a, a).empty());

  StoreState b = a;
  b.collections["c"]["o"].data = "hellp";
  CHECK(first_difference(a, b) ==
        "c/\"o\": data differs at byte 4 (expected size 5, found 5; expected 0x6f, found 0x70)");
  b = a;
  b.collections["c"]["o"].data = "hell";
  CHECK(first_difference(a, b).find("data size is 4, expected 5") != std::string::npos);
  b = a;
  b.collections["c"]["o"].xattrs["x"] = "2";
  CHECK(first_difference(a, b).find("xattr \"x\" is \"2\", expected \"1\"") != std::string::npos);
  b = a;
  b.collections["c"]["o"].omap.erase("k");
  CHECK(first_difference(a, b).find("omap key \"k\" missing") != std::string::npos);
  b = a;
  b.collections["c"]["o"].header = "";
  CHECK(first_difference(a, b).find("omap header") != std::string::npos);
  b = a;
  b.collections["c"]["p"];
  CHECK(first_difference(a, b).find("unexpected object") != std::string::npos);
  b = a;
  b.collections.erase("c");
  CHECK(first_difference(a, b) == "collection \"c\" missing");
  CHECK(printable(std::string("a\0\"", 3)) == "\"a\\x00\\x22\"");
}

}  // namespace
}  // namespace strata::testing
