#include <catch2/catch.hpp>
#include <random>

#include "store/transaction.h"

using strata::store::Transaction;

namespace {
std::string sv(strata_slice s) { return std::string(s.data ? s.data : "", s.len); }
}  // namespace

TEST_CASE("a transaction survives encoding to a journal record and back") {
  Transaction t;
  std::string bin("a\0b\xff", 4);
  t.mkcoll("1.0")
      .write("1.0", "obj", 4096, "hello")
      .append("1.0", bin, "more")
      .setxattr("1.0", "obj", "user.x", bin)
      .omap_set("1.0", "obj", "k", "v")
      .clone("1.0", "obj", "obj.snap")
      .truncate("1.0", "obj", 12);
  auto d = Transaction::decode(t.encode());
  REQUIRE(d.ok());
  REQUIRE(d->size() == t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const strata_op &a = t.ops()[i], &b = d->ops()[i];
    CHECK(a.type == b.type);
    CHECK(a.offset == b.offset);
    CHECK(a.length == b.length);
    CHECK(sv(a.collection) == sv(b.collection));
    CHECK(sv(a.object) == sv(b.object));
    CHECK(sv(a.key) == sv(b.key));
    CHECK(sv(a.value) == sv(b.value));
  }
  CHECK(sv(d->ops()[2].object) == bin);
}

TEST_CASE("a transaction decoded by adopting its record points into it and survives moves") {
  Transaction t;
  std::string big(1 << 20, 'q');
  big[12345] = 'z';
  t.write_full("1.0", "obj", big).setxattr("1.0", "obj", "user.x", "y").omap_rm("1.0", "obj", "k");
  std::string rec = t.encode();
  const char *lo = rec.data(), *hi = rec.data() + rec.size();
  auto d = Transaction::decode_adopting(std::move(rec));
  REQUIRE(d.ok());
  // Moved twice: a deque keeps its elements, so the slices stay valid.
  Transaction moved = std::move(*d);
  Transaction again = std::move(moved);
  REQUIRE(again.size() == 3);
  const strata_op &w = again.ops()[0];
  CHECK(w.value.data >= lo);
  CHECK(w.value.data + w.value.len <= hi);  // no copy of the megabyte
  CHECK(sv(w.value) == big);
  CHECK(sv(again.ops()[1].value) == "y");
  CHECK(again.ops()[2].value.data == nullptr);  // empty stays null, as add() makes it
  CHECK(again.ops()[2].value.len == 0);
  CHECK_FALSE(Transaction::decode_adopting(std::string("garbage")).ok());
}

TEST_CASE("every truncation of a record is rejected with an error, never misread") {
  Transaction t;
  t.write("c", "o", 0, std::string(100, 'x')).omap_set("c", "o", "key", "value");
  std::string rec = t.encode();
  for (size_t n = 0; n < rec.size(); ++n) {
    auto d = Transaction::decode(std::string_view(rec).substr(0, n));
    CHECK_FALSE(d.ok());
  }
  std::string longer = rec + "x";
  CHECK_FALSE(Transaction::decode(longer).ok());
}

TEST_CASE("random garbage never decodes into a transaction that reads out of bounds") {
  std::mt19937 rng(42);
  Transaction t;
  t.write("c", "o", 0, "abc");
  std::string rec = t.encode();
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string g = rec;
    for (int flips = 0; flips < 3; ++flips) g[rng() % g.size()] = static_cast<char>(rng());
    auto d = Transaction::decode(g);
    if (d.ok()) {
      ++decoded;
      for (const strata_op &op : d->ops()) CHECK(op.value.len <= g.size());
    }
  }
  CHECK(decoded < 20000);
}
