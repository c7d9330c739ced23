// Listing a collection's objects: bytewise order, limits, and cursors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <set>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "l";

// n distinct names mixing text and binary bytes; returned sorted bytewise.
std::vector<std::string> mixed_names(size_t n) {
  std::set<std::string> names;
  for (size_t i = 0; names.size() < n; ++i) {
    switch (i % 4) {
      case 0:
        names.insert("obj." + std::to_string(i));
        break;
      case 1:
        names.insert(pattern_bytes(1 + i % 40, i));
        break;
      case 2:
        names.insert(std::string(1, static_cast<char>(i % 256)) + std::to_string(i));
        break;
      default:
        names.insert("rbd_data." + std::to_string(i * 7919 % 100000));
        break;
    }
  }
  return {names.begin(), names.end()};
}

struct ListingStore : FreshStore {
  std::vector<std::string> names;
  explicit ListingStore(size_t n) : names(mixed_names(n)) {
    TxnBuilder t;
    t.mkcoll(kColl).mkcoll("other");
    for (size_t i = 0; i < names.size(); ++i) {
      t.touch(kColl, names[i]);
      if (t.size() >= 200) {
        apply(t);
        t = TxnBuilder();
      }
    }
    t.touch("other", "not-in-l");
    apply(t);
  }
};

TEST_CASE("list_objects visits 2,000 objects in bytewise order", "[backend][list]") {
  ListingStore s(2000);
  CHECK(s.list_objects(kColl) == s.names);
}

TEST_CASE("paging with the last name as cursor visits every object exactly once",
          "[backend][list]") {
  ListingStore s(2000);
  for (uint64_t page : {1, 137, 1000, 1999, 2000, 5000}) {
    INFO("page size " << page);
    CHECK(s.list_all_objects(kColl, page) == s.names);
  }
}

TEST_CASE("list_objects returns at most limit names, starting after the cursor",
          "[backend][list]") {
  ListingStore s(300);
  NameList first = s.list_objects(kColl, {}, 10);
  CHECK(first == NameList(s.names.begin(), s.names.begin() + 10));
  NameList next = s.list_objects(kColl, first.back(), 25);
  CHECK(next == NameList(s.names.begin() + 10, s.names.begin() + 35));
  CHECK(s.list_objects(kColl, s.names.back(), 10).empty());
}

TEST_CASE("a cursor naming an object that no longer exists resumes at the next name",
          "[backend][list]") {
  ListingStore s(100);
  std::string cursor = s.names[41];
  s.apply(TxnBuilder().remove(kColl, cursor));
  CHECK(s.list_objects(kColl, cursor, 3) == NameList(s.names.begin() + 42, s.names.begin() + 45));
  // A cursor that never was a name also works: it falls between two names.
  std::string between = s.names[60] + std::string("\0", 1);
  CHECK(s.list_objects(kColl, between, 2) == NameList(s.names.begin() + 61, s.names.begin() + 63));
}

TEST_CASE("listing a collection shows none of another collection's objects", "[backend][list]") {
  ListingStore s(50);
  CHECK(s.list_objects("other") == NameList{"not-in-l"});
  NameList l = s.list_objects(kColl);
  CHECK(std::find(l.begin(), l.end(), "not-in-l") == l.end());
}

TEST_CASE("an empty collection lists nothing", "[backend][list]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("empty"));
  CHECK(s.list_objects("empty").empty());
  CHECK(s.list_objects("empty", "cursor", 10).empty());
}

int stop_after_five(void *ctx, strata_slice) {
  int &seen = *static_cast<int *>(ctx);
  return ++seen == 5 ? 1 : 0;
}

TEST_CASE("list_objects stops when the visitor asks it to", "[backend][list]") {
  ListingStore s(20);
  int seen = 0;
  strata_err err{};
  int rc = backend_ops().list_objects(s.handle(), {kColl, std::strlen(kColl)}, {"", 0}, 0,
                                      stop_after_five, &seen, &err);
  // ABI 1.3 (plugin.h, "Visitors"): the stop value comes back; 0 before.
  CHECK(Errno(rc) == Errno(descriptor().abi_minor >= 3 ? 1 : 0));
  CHECK(seen == 5);
}

TEST_CASE("a listing cursor taken before a checkpoint and reopen still resumes after it",
          "[backend][list]") {
  ListingStore s(500);
  NameList first = s.list_objects(kColl, {}, 123);
  s.checkpoint();
  s.reopen();
  CHECK(s.list_objects(kColl, first.back(), 0) == NameList(s.names.begin() + 123, s.names.end()));
}

}  // namespace
