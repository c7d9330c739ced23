// An object's byte stream: writes, holes, write_full, truncate, zero.
#include <catch2/catch.hpp>
#include <random>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "data";

// A store with one collection, kColl.
struct DataStore : FreshStore {
  DataStore() { apply(TxnBuilder().mkcoll(kColl)); }
};

TEST_CASE("a write creates the object and reads back exactly", "[backend][data]") {
  DataStore s;
  std::string bytes = pattern_bytes(10000, 1);
  s.apply(TxnBuilder().write(kColl, "o", 0, bytes));
  CHECK(s.size(kColl, "o") == 10000);
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
  CHECK(same_bytes(s.read(kColl, "o", 1234, 100), bytes.substr(1234, 100)));
}

TEST_CASE("overlapping writes leave the last write's bytes", "[backend][data]") {
  DataStore s;
  std::string expect = pattern_bytes(8192, 2);
  std::string middle = pattern_bytes(3000, 3);
  std::string tail = pattern_bytes(500, 4);
  s.apply(TxnBuilder().write(kColl, "o", 0, expect));
  s.apply(TxnBuilder().write(kColl, "o", 1000, middle));
  s.apply(TxnBuilder().write(kColl, "o", 2500, tail));
  expect.replace(1000, middle.size(), middle);
  expect.replace(2500, tail.size(), tail);
  CHECK(s.size(kColl, "o") == 8192);
  CHECK(same_bytes(s.read_all(kColl, "o"), expect));
}

TEST_CASE("a write past the end leaves a hole that reads as zeros", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, "head"));
  s.apply(TxnBuilder().write(kColl, "o", 100000, "tail"));
  CHECK(s.size(kColl, "o") == 100004);
  std::string expect = "head" + std::string(100000 - 4, '\0') + "tail";
  CHECK(same_bytes(s.read_all(kColl, "o"), expect));
}

TEST_CASE("an object written only far from its start reads zeros before the write",
          "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 5 << 20, "x"));
  CHECK(s.size(kColl, "o") == (5u << 20) + 1);
  CHECK(same_bytes(s.read(kColl, "o", 0, 4096), std::string(4096, '\0')));
  CHECK(same_bytes(s.read(kColl, "o", (5 << 20) - 2, 3), std::string("\0\0x", 3)));
}

TEST_CASE("a read past the end is short and a read at or beyond the size returns nothing",
          "[backend][data]") {
  DataStore s;
  std::string bytes = pattern_bytes(1000, 5);
  s.apply(TxnBuilder().write(kColl, "o", 0, bytes));
  std::string got;
  CHECK(s.read_rc(kColl, "o", 900, 500, &got) == 100);
  CHECK(same_bytes(got, bytes.substr(900)));
  CHECK(s.read_rc(kColl, "o", 1000, 10) == 0);
  CHECK(s.read_rc(kColl, "o", 5000, 10) == 0);
  CHECK(s.read_rc(kColl, "o", 0, 0) == 0);
}

TEST_CASE("a zero-length write past the end extends the size (size = max(size, offset + len))",
          "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, "abc"));
  s.apply(TxnBuilder().write(kColl, "o", 10, ""));
  CHECK(s.size(kColl, "o") == 10);
  CHECK(same_bytes(s.read_all(kColl, "o"), std::string("abc\0\0\0\0\0\0\0", 10)));
}

TEST_CASE("write_full replaces the data and keeps xattrs, omap and header", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder()
              .write(kColl, "o", 0, pattern_bytes(20000, 6))
              .setxattr(kColl, "o", "x", "1")
              .omap_set(kColl, "o", "k", "v")
              .omap_set_header(kColl, "o", "h"));
  std::string smaller = pattern_bytes(300, 7);
  s.apply(TxnBuilder().write_full(kColl, "o", smaller));
  CHECK(s.size(kColl, "o") == 300);
  CHECK(same_bytes(s.read_all(kColl, "o"), smaller));
  CHECK(s.getxattr(kColl, "o", "x") == "1");
  CHECK(s.omap_get(kColl, "o", "k") == "v");
  CHECK(s.omap_header(kColl, "o") == "h");
}

TEST_CASE("write_full with no data leaves an empty object", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, "something"));
  s.apply(TxnBuilder().write_full(kColl, "o", ""));
  CHECK(s.exists(kColl, "o"));
  CHECK(s.size(kColl, "o") == 0);
}

TEST_CASE("write_full over a larger object does not let old bytes reappear when it grows",
          "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, pattern_bytes(70000, 8)));
  s.apply(TxnBuilder().write_full(kColl, "o", "new"));
  s.apply(TxnBuilder().truncate(kColl, "o", 70000));
  CHECK(same_bytes(s.read_all(kColl, "o"), "new" + std::string(70000 - 3, '\0')));
}

TEST_CASE("truncate shrinks and the dropped bytes do not come back when the object grows again",
          "[backend][data]") {
  DataStore s;
  std::string bytes = pattern_bytes(200000, 9);
  s.apply(TxnBuilder().write(kColl, "o", 0, bytes));
  s.apply(TxnBuilder().truncate(kColl, "o", 4097));
  CHECK(s.size(kColl, "o") == 4097);
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes.substr(0, 4097)));
  s.apply(TxnBuilder().truncate(kColl, "o", 200000));
  CHECK(
      same_bytes(s.read_all(kColl, "o"), bytes.substr(0, 4097) + std::string(200000 - 4097, '\0')));
}

TEST_CASE("truncate past the end extends the object with zeros", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, "abc"));
  s.apply(TxnBuilder().truncate(kColl, "o", 1 << 20));
  CHECK(s.size(kColl, "o") == (1u << 20));
  CHECK(same_bytes(s.read_all(kColl, "o"), "abc" + std::string((1 << 20) - 3, '\0')));
}

TEST_CASE("truncate to zero empties the object but keeps it", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, "abc").setxattr(kColl, "o", "x", "y"));
  s.apply(TxnBuilder().truncate(kColl, "o", 0));
  CHECK(s.exists(kColl, "o"));
  CHECK(s.size(kColl, "o") == 0);
  CHECK(s.getxattr(kColl, "o", "x") == "y");
}

TEST_CASE("zero clears a range without changing the size", "[backend][data]") {
  DataStore s;
  std::string bytes = pattern_bytes(300000, 10);
  s.apply(TxnBuilder().write(kColl, "o", 0, bytes));
  s.apply(TxnBuilder().zero(kColl, "o", 1000, 150000));
  std::string expect = bytes;
  expect.replace(1000, 150000, std::string(150000, '\0'));
  CHECK(s.size(kColl, "o") == 300000);
  CHECK(same_bytes(s.read_all(kColl, "o"), expect));
}

TEST_CASE("zero is clipped to the size and never extends the object", "[backend][data]") {
  DataStore s;
  std::string bytes = pattern_bytes(5000, 11);
  s.apply(TxnBuilder().write(kColl, "o", 0, bytes));
  s.apply(TxnBuilder().zero(kColl, "o", 4000, 100000));
  CHECK(s.size(kColl, "o") == 5000);
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes.substr(0, 4000) + std::string(1000, '\0')));
  s.apply(TxnBuilder().zero(kColl, "o", 10000, 10));
  CHECK(s.size(kColl, "o") == 5000);
}

TEST_CASE("zero of an empty or missing object leaves it empty", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().zero(kColl, "o", 0, 4096));
  CHECK(s.size(kColl, "o") == 0);
}

TEST_CASE("an append is a write at the old size, and applying it again leaves one copy",
          "[backend][data]") {
  // The ABI has no append: the host turns it into a write at the offset it
  // computed, so replaying it must not append twice.
  DataStore s;
  s.apply(TxnBuilder().write(kColl, "log", 0, "first;"));
  TxnBuilder append = TxnBuilder().write(kColl, "log", s.size(kColl, "log"), "second;");
  uint64_t seq = s.apply(append);
  s.apply_at(append, seq);
  CHECK(same_bytes(s.read_all(kColl, "log"), "first;second;"));
}

TEST_CASE("touch creates an empty object and leaves an existing one unchanged", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder().touch(kColl, "new"));
  CHECK(s.exists(kColl, "new"));
  CHECK(s.size(kColl, "new") == 0);
  s.apply(TxnBuilder().write(kColl, "old", 0, "keep"));
  s.apply(TxnBuilder().touch(kColl, "old"));
  CHECK(same_bytes(s.read_all(kColl, "old"), "keep"));
}

TEST_CASE("a removed object is gone together with its xattrs and omap", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder()
              .write(kColl, "o", 0, "bytes")
              .setxattr(kColl, "o", "x", "1")
              .omap_set(kColl, "o", "k", "v")
              .omap_set_header(kColl, "o", "h"));
  s.apply(TxnBuilder().remove(kColl, "o"));
  CHECK_FALSE(s.exists(kColl, "o"));
  CHECK(s.list_objects(kColl).empty());
}

TEST_CASE("an object created again after remove starts empty", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder()
              .write(kColl, "o", 0, pattern_bytes(10000, 12))
              .setxattr(kColl, "o", "x", "1")
              .omap_set(kColl, "o", "k", "v")
              .omap_set_header(kColl, "o", "h"));
  s.apply(TxnBuilder().remove(kColl, "o"));
  s.apply(TxnBuilder().write(kColl, "o", 5, "new"));
  CHECK(s.size(kColl, "o") == 8);
  CHECK(same_bytes(s.read_all(kColl, "o"), std::string("\0\0\0\0\0new", 8)));
  CHECK(s.getxattrs(kColl, "o").empty());
  CHECK(s.omap(kColl, "o").empty());
  CHECK(s.omap_header(kColl, "o").empty());
}

TEST_CASE("stat reports the size and the number of xattrs", "[backend][data]") {
  DataStore s;
  s.apply(TxnBuilder()
              .write(kColl, "o", 0, pattern_bytes(12345, 13))
              .setxattr(kColl, "o", "a", "1")
              .setxattr(kColl, "o", "b", "2"));
  strata_object_stat st = s.stat(kColl, "o");
  CHECK(st.size == 12345);
  CHECK(st.n_xattrs == 2);
  CHECK(st.struct_size > 0);
  CHECK(st.struct_size <= sizeof(strata_object_stat));
}

TEST_CASE("random writes, zeros, truncates and write_fulls match a simple model",
          "[backend][data]") {
  // A byte string is the model; every transaction is checked against it so
  // that a failure points at the op sequence that broke the store.
  DataStore s;
  std::mt19937_64 rng(42);
  std::string model;
  auto below = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
  const uint64_t kSpan = 300000;  // crosses common page, block and chunk sizes
  for (int step = 0; step < 150; ++step) {
    TxnBuilder t;
    std::string what;
    for (int i = 0, n = 1 + static_cast<int>(below(3)); i < n; ++i) {
      switch (below(6)) {
        case 0:
        case 1: {
          uint64_t off = below(kSpan), len = 1 + below(70000);
          std::string bytes = pattern_bytes(len, rng());
          t.write(kColl, "o", off, bytes);
          if (model.size() < off + len) model.resize(off + len, '\0');
          model.replace(off, len, bytes);
          what += " write(" + std::to_string(off) + "," + std::to_string(len) + ")";
          break;
        }
        case 2: {
          uint64_t off = below(kSpan), len = below(100000);
          t.zero(kColl, "o", off, len);
          if (off < model.size())
            model.replace(off, std::min(len, model.size() - off),
                          std::string(std::min(len, model.size() - off), '\0'));
          what += " zero(" + std::to_string(off) + "," + std::to_string(len) + ")";
          break;
        }
        case 3:
        case 4: {
          uint64_t size = below(kSpan);
          t.truncate(kColl, "o", size);
          model.resize(size, '\0');
          what += " truncate(" + std::to_string(size) + ")";
          break;
        }
        default: {
          std::string bytes = pattern_bytes(below(5000), rng());
          t.write_full(kColl, "o", bytes);
          model = bytes;
          what += " write_full(" + std::to_string(bytes.size()) + ")";
        }
      }
    }
    s.apply(t);
    INFO("step " << step << ":" << what);
    REQUIRE(s.size(kColl, "o") == model.size());
    REQUIRE(same_bytes(s.read_all(kColl, "o"), model));
  }
}

}  // namespace
