// Large objects and many objects.
#include <catch2/catch.hpp>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "big";
constexpr uint64_t kMiB = 1 << 20;

TEST_CASE("a 64 MiB sparse object reads zeros everywhere but where it was written",
          "[backend][large]") {
  FreshStore s;
  std::string head = pattern_bytes(4096, 31), mid = pattern_bytes(5000, 32),
              tail = pattern_bytes(4096, 33);
  const uint64_t size = 64 * kMiB;
  s.apply(TxnBuilder()
              .mkcoll(kColl)
              .write(kColl, "sparse", 0, head)
              .write(kColl, "sparse", 30 * kMiB + 123, mid)
              .write(kColl, "sparse", size - tail.size(), tail));
  REQUIRE(s.size(kColl, "sparse") == size);
  std::string expect_piece;
  for (uint64_t off = 0; off < size; off += 8 * kMiB) {
    std::string piece = s.read(kColl, "sparse", off, 8 * kMiB);
    REQUIRE(piece.size() == 8 * kMiB);
    std::string expect(8 * kMiB, '\0');
    auto place = [&](uint64_t at, const std::string &bytes) {
      for (uint64_t i = 0; i < bytes.size(); ++i)
        if (at + i >= off && at + i < off + 8 * kMiB) expect[at + i - off] = bytes[i];
    };
    place(0, head);
    place(30 * kMiB + 123, mid);
    place(size - tail.size(), tail);
    INFO("8 MiB piece at " << off);
    REQUIRE(same_bytes(piece, expect));
  }
}

TEST_CASE("an 8 MiB object written in one op round trips", "[backend][large]") {
  FreshStore s;
  std::string bytes = pattern_bytes(8 * kMiB, 34);
  s.apply(TxnBuilder().mkcoll(kColl).write(kColl, "dense", 0, bytes));
  CHECK(s.size(kColl, "dense") == 8 * kMiB);
  CHECK(same_bytes(s.read_all(kColl, "dense"), bytes));
  // Odd-sized reads at odd offsets.
  for (uint64_t off : std::vector<uint64_t>{1, 4095, 65537, 3 * kMiB + 7, 8 * kMiB - 10}) {
    INFO("read at " << off);
    CHECK(same_bytes(s.read(kColl, "dense", off, 100003), bytes.substr(off, 100003)));
  }
}

TEST_CASE("an 8 MiB object written in 1 MiB pieces over several transactions reads as one",
          "[backend][large]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll(kColl));
  std::string bytes = pattern_bytes(8 * kMiB, 35);
  // Written back to front so that every write lands before the current end.
  for (int piece = 7; piece >= 0; --piece)
    s.apply(TxnBuilder().write(kColl, "pieces", piece * kMiB, bytes.substr(piece * kMiB, kMiB)));
  CHECK(same_bytes(s.read_all(kColl, "pieces"), bytes));
}

TEST_CASE("a large object survives checkpoint and reopen", "[backend][large]") {
  FreshStore s;
  std::string bytes = pattern_bytes(8 * kMiB, 36);
  s.apply(TxnBuilder()
              .mkcoll(kColl)
              .write(kColl, "o", 0, bytes)
              .write(kColl, "sparse", 40 * kMiB, "end"));
  s.checkpoint();
  s.reopen();
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
  CHECK(s.size(kColl, "sparse") == 40 * kMiB + 3);
  CHECK(same_bytes(s.read(kColl, "sparse", 20 * kMiB, kMiB), std::string(kMiB, '\0')));
}

TEST_CASE("3,000 small objects with xattrs and omap entries all read back", "[backend][large]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll(kColl));
  auto name = [](int i) { return "small." + std::to_string(100000 + i); };
  for (int batch = 0; batch < 30; ++batch) {
    TxnBuilder t;
    for (int i = batch * 100; i < (batch + 1) * 100; ++i)
      t.write(kColl, name(i), 0, pattern_bytes(1 + i % 3000, i))
          .setxattr(kColl, name(i), "_", std::to_string(i))
          .omap_set(kColl, name(i), "k", std::to_string(i * 2));
    s.apply(t);
  }
  NameList all = s.list_all_objects(kColl, 500);
  REQUIRE(all.size() == 3000);
  for (int i = 0; i < 3000; ++i) {
    REQUIRE(all[i] == name(i));
    REQUIRE(same_bytes(s.read_all(kColl, name(i)), pattern_bytes(1 + i % 3000, i)));
    REQUIRE(s.getxattr(kColl, name(i), "_") == std::to_string(i));
    REQUIRE(s.omap_get(kColl, name(i), "k") == std::to_string(i * 2));
  }
}

}  // namespace
