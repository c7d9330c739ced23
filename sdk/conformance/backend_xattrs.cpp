// Extended attributes: small named values, listed in bytewise name order.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "x";

struct XattrStore : FreshStore {
  XattrStore() { apply(TxnBuilder().mkcoll(kColl)); }
};

TEST_CASE("xattrs set in a transaction read back by name", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder()
              .setxattr(kColl, "o", "user.a", "one")
              .setxattr(kColl, "o", "user.b", std::string("t\0o", 3)));
  CHECK(s.getxattr(kColl, "o", "user.a") == "one");
  CHECK(s.getxattr(kColl, "o", "user.b") == std::string("t\0o", 3));
}

TEST_CASE("setting an xattr again replaces its value", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder().setxattr(kColl, "o", "n", "a much longer first value"));
  s.apply(TxnBuilder().setxattr(kColl, "o", "n", "short"));
  CHECK(s.getxattr(kColl, "o", "n") == "short");
  CHECK(s.getxattrs(kColl, "o").size() == 1);
}

TEST_CASE("getxattrs lists every xattr in bytewise name order", "[backend][xattr]") {
  XattrStore s;
  // Unsigned byte order: 0x7f < 0x80 < 0xff, "a" < "aa" < "b", capitals first.
  KvList expect = {{"A", "1"},     {"Z", "2"},    {"_", "3"},     {"a", "4"},   {"aa", "5"},
                   {"b\x01", "6"}, {"\x7f", "7"}, {"\x80z", "8"}, {"\xff", "9"}};
  TxnBuilder t;
  for (auto it = expect.rbegin(); it != expect.rend(); ++it)
    t.setxattr(kColl, "o", it->first, it->second);
  s.apply(t);
  CHECK(s.getxattrs(kColl, "o") == expect);
}

TEST_CASE("rmxattr removes only the named xattr", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder().setxattr(kColl, "o", "a", "1").setxattr(kColl, "o", "b", "2"));
  s.apply(TxnBuilder().rmxattr(kColl, "o", "a").rmxattr(kColl, "o", "never-set"));
  CHECK_FALSE(s.getxattr(kColl, "o", "a").has_value());
  CHECK(s.getxattrs(kColl, "o") == KvList{{"b", "2"}});
  CHECK(s.stat(kColl, "o").n_xattrs == 1);
}

TEST_CASE("a missing xattr answers ENODATA and a missing object ENOENT", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder().touch(kColl, "o"));
  char buf[16];
  CHECK(Errno(s.getxattr_rc(kColl, "o", "absent", buf, sizeof buf)) == Errno(-ENODATA));
  CHECK(Errno(s.getxattr_rc(kColl, "missing", "absent", buf, sizeof buf)) == Errno(-ENOENT));
  CHECK(Errno(s.getxattrs_rc(kColl, "missing")) == Errno(-ENOENT));
}

TEST_CASE("a too-small buffer gets the full length of an xattr and nothing copied",
          "[backend][xattr]") {
  XattrStore s;
  std::string value = pattern_bytes(1000, 3);
  s.apply(TxnBuilder().setxattr(kColl, "o", "big", value));
  std::string buf(999, '#');
  CHECK(s.getxattr_rc(kColl, "o", "big", buf.data(), buf.size()) == 1000);
  CHECK(buf == std::string(999, '#'));
  CHECK(s.getxattr_rc(kColl, "o", "big", nullptr, 0) == 1000);
  std::string exact(1000, '#');
  CHECK(s.getxattr_rc(kColl, "o", "big", exact.data(), exact.size()) == 1000);
  CHECK(exact == value);
}

TEST_CASE("an empty xattr value is present, unlike a missing one", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder().setxattr(kColl, "o", "empty", ""));
  CHECK(s.getxattr_rc(kColl, "o", "empty", nullptr, 0) == 0);
  CHECK(s.getxattr(kColl, "o", "empty") == "");
  CHECK(s.getxattrs(kColl, "o") == KvList{{"empty", ""}});
}

TEST_CASE("an xattr with a 255-byte name and a 64 KiB value round trips", "[backend][xattr]") {
  XattrStore s;
  std::string name(255, 'n');
  std::string value = pattern_bytes(64 * 1024, 4);
  s.apply(TxnBuilder().setxattr(kColl, "o", name, value));
  CHECK(s.getxattr(kColl, "o", name) == value);
  s.checkpoint();
  s.reopen();
  CHECK(s.getxattr(kColl, "o", name) == value);
}

TEST_CASE("xattrs do not touch the object's data or omap", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder().write(kColl, "o", 0, "data").omap_set(kColl, "o", "k", "v"));
  s.apply(TxnBuilder().setxattr(kColl, "o", "k", "xattr"));
  CHECK(same_bytes(s.read_all(kColl, "o"), "data"));
  CHECK(s.omap(kColl, "o") == KvList{{"k", "v"}});
}

int stop_after_two(void *ctx, strata_slice, strata_slice) {
  int &seen = *static_cast<int *>(ctx);
  return ++seen == 2 ? 1 : 0;
}

TEST_CASE("getxattrs stops when the visitor asks it to", "[backend][xattr]") {
  XattrStore s;
  s.apply(TxnBuilder()
              .setxattr(kColl, "o", "a", "1")
              .setxattr(kColl, "o", "b", "2")
              .setxattr(kColl, "o", "c", "3"));
  int seen = 0;
  strata_err err{};
  int rc = backend_ops().getxattrs(s.handle(), {kColl, std::strlen(kColl)}, {"o", 1},
                                   stop_after_two, &seen, &err);
  // ABI 1.3 (plugin.h, "Visitors"): the stop value comes back; 0 before.
  CHECK(Errno(rc) == Errno(descriptor().abi_minor >= 3 ? 1 : 0));
  CHECK(seen == 2);
}

}  // namespace
