// kv backend, object data: atomic multi-op transactions, sparse chunks,
// overwrites, truncate and zero — through the plugin file, both engines.
#include <catch2/catch.hpp>

#include "kv_harness.h"

using namespace strata::test;
using namespace std::string_literals;

namespace {
std::string pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 % 251);
  return s;
}
}  // namespace

TEST_CASE("a transaction of many ops is applied as a whole", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  TxnBuilder t;
  t.mkcoll("pg1")
      .write("pg1", "a", 0, "hello")
      .write("pg1", "a", 5, " world")
      .setxattr("pg1", "a", "_", "meta")
      .omap_set("pg1", "a", "k", "v")
      .clone("pg1", "a", "b")
      .write("pg1", "b", 0, "HELLO");
  h.apply(1, t);
  CHECK(h.read("pg1", "a", 0, 100) == "hello world");
  CHECK(h.read("pg1", "b", 0, 100) == "HELLO world");
  CHECK(h.getxattr("pg1", "b", "_") == "meta");
  CHECK(h.usage().n_objects == 2);
}

TEST_CASE("a failing transaction leaves nothing of its earlier ops behind", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  h.apply(1, TxnBuilder().mkcoll("pg1"));
  TxnBuilder bad;
  bad.write("pg1", "a", 0, "data").touch("no-such-collection", "x");
  CHECK(h.try_apply(2, bad) == -ENOENT);
  CHECK(h.last_error().find("no-such-collection") != std::string::npos);
  CHECK_FALSE(h.exists("pg1", "a"));
  CHECK(h.usage().n_objects == 0);
}

TEST_CASE("never-written ranges read as zero and reads stop at the size", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  const uint64_t far = 1 << 20;  // 16 chunks of nothing before the data
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", far, "tail"));
  CHECK(h.size("c", "o") == far + 4);
  CHECK(h.read("c", "o", 0, 4096) == std::string(4096, '\0'));
  CHECK(h.read("c", "o", far - 2, 100) == "\0\0tail"s);  // short read at the end
  CHECK(h.read("c", "o", far + 4, 10).empty());
  std::string whole = h.read("c", "o", 0, far + 4);
  CHECK(whole == std::string(far, '\0') + "tail");
}

TEST_CASE("a 4 KiB overwrite inside a 4 MiB object changes only those bytes", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  const std::string big = pattern(4 << 20, 'a');
  h.apply(1, TxnBuilder().mkcoll("c").write_full("c", "o", big));
  const std::string patch = pattern(4096, 'Z');
  const uint64_t at = (1 << 20) + 1000;  // straddles no chunk edge, not aligned
  h.apply(2, TxnBuilder().write("c", "o", at, patch));
  std::string expect = big;
  expect.replace(at, patch.size(), patch);
  CHECK(h.size("c", "o") == big.size());
  CHECK(h.read("c", "o", 0, 8 << 20) == expect);
  // Across a chunk boundary, both chunks keep their other bytes.
  h.apply(3, TxnBuilder().write("c", "o", (2 << 20) - 10, "0123456789abcdefghij"));
  expect.replace((2 << 20) - 10, 20, "0123456789abcdefghij");
  CHECK(h.read("c", "o", (2 << 20) - 4096, 8192) == expect.substr((2 << 20) - 4096, 8192));
}

TEST_CASE("truncate shrinks, and extends with zeros; old bytes never reappear", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"), "4K");
  const std::string data = pattern(20000, 'q');
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, data));
  h.apply(2, TxnBuilder().truncate("c", "o", 5000));
  CHECK(h.size("c", "o") == 5000);
  h.apply(3, TxnBuilder().truncate("c", "o", 12000));
  CHECK(h.size("c", "o") == 12000);
  CHECK(h.read("c", "o", 0, 20000) == data.substr(0, 5000) + std::string(7000, '\0'));
  // A write past the end after a shrink: the gap reads as zero too.
  h.apply(4, TxnBuilder().truncate("c", "o", 100).write("c", "o", 9000, "x"));
  CHECK(h.read("c", "o", 0, 20000) == data.substr(0, 100) + std::string(8900, '\0') + "x");
  CHECK(h.fsck() == 0);
}

TEST_CASE("zero clears bytes within the size and never changes the size", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"), "4K");
  const std::string data = pattern(40000, 'm');
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, data));
  // Partial head chunk, many whole chunks, partial tail chunk.
  h.apply(2, TxnBuilder().zero("c", "o", 100, 30000));
  std::string expect = data;
  std::fill(expect.begin() + 100, expect.begin() + 30100, '\0');
  CHECK(h.read("c", "o", 0, 50000) == expect);
  // Past the end: clipped, the size stays.
  h.apply(3, TxnBuilder().zero("c", "o", 39990, 1 << 20));
  std::fill(expect.begin() + 39990, expect.end(), '\0');
  CHECK(h.size("c", "o") == 40000);
  CHECK(h.read("c", "o", 0, 50000) == expect);
  // On a missing object: creates it, empty.
  h.apply(4, TxnBuilder().zero("c", "new", 0, 100));
  CHECK(h.size("c", "new") == 0);
  CHECK(h.fsck() == 0);
}

TEST_CASE("write_full replaces the data and keeps xattrs and omap", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"), "4K");
  h.apply(1, TxnBuilder()
                 .mkcoll("c")
                 .write("c", "o", 0, pattern(50000, 'w'))
                 .setxattr("c", "o", "x", "1")
                 .omap_set("c", "o", "k", "2"));
  h.apply(2, TxnBuilder().write_full("c", "o", "short"));
  CHECK(h.size("c", "o") == 5);
  CHECK(h.read("c", "o", 0, 100) == "short");
  CHECK(h.getxattr("c", "o", "x") == "1");
  CHECK(h.omap_get("c", "o", "k") == "2");
  h.apply(3, TxnBuilder().truncate("c", "o", 50000));
  CHECK(h.read("c", "o", 0, 50000) == "short" + std::string(49995, '\0'));
  CHECK(h.fsck() == 0);
}

TEST_CASE("a zero-length write at an offset extends the size as documented", "[kv][data]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 300, ""));
  CHECK(h.size("c", "o") == 300);
  CHECK(h.read("c", "o", 0, 1000) == std::string(300, '\0'));
}
