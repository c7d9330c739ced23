// Error answers: what a missing object, a missing collection, or an op the
// store does not know looks like.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>

#include "kit.h"

namespace {
using namespace strata::conformance;

strata_slice sl(std::string_view s) { return {s.data(), s.size()}; }

// Every read function's answer for (coll, oid), by name.
std::vector<std::pair<std::string, int64_t>> read_answers(const FreshStore &s,
                                                          std::string_view coll,
                                                          std::string_view oid) {
  char buf[64];
  return {{"read", s.read_rc(coll, oid, 0, 10)},
          {"stat", s.stat_rc(coll, oid)},
          {"getxattr", s.getxattr_rc(coll, oid, "x", buf, sizeof buf)},
          {"getxattrs", s.getxattrs_rc(coll, oid)},
          {"omap_get_header", s.omap_header_rc(coll, oid, buf, sizeof buf)},
          {"omap_get", s.omap_get_rc(coll, oid, "k", buf, sizeof buf)},
          {"omap_iterate", s.omap_rc(coll, oid, {}, {}, 0)}};
}

TEST_CASE("every read of a missing object answers ENOENT", "[backend][errors]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "present", 0, "x"));
  for (const auto &[call, rc] : read_answers(s, "c", "missing")) {
    INFO(call);
    CHECK(errno_name(rc) == "ENOENT");
  }
}

TEST_CASE("every read in a missing collection answers ENOENT", "[backend][errors]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c").write("c", "o", 0, "x"));
  for (const auto &[call, rc] : read_answers(s, "nope", "o")) {
    INFO(call);
    CHECK(errno_name(rc) == "ENOENT");
  }
  CHECK(errno_name(s.list_objects_rc("nope", {}, 0)) == "ENOENT");
}

TEST_CASE("reads of a removed object answer ENOENT", "[backend][errors]") {
  FreshStore s;
  s.apply(TxnBuilder()
              .mkcoll("c")
              .write("c", "o", 0, "x")
              .setxattr("c", "o", "x", "1")
              .omap_set("c", "o", "k", "v"));
  s.apply(TxnBuilder().remove("c", "o"));
  for (const auto &[call, rc] : read_answers(s, "c", "o")) {
    INFO(call);
    CHECK(errno_name(rc) == "ENOENT");
  }
}

TEST_CASE("a failed read explains itself in one line", "[backend][errors]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c"));
  strata_err err{};
  char buf[8];
  int64_t rc =
      backend_ops().read(s.handle(), sl("c"), sl("missing-object"), 0, sizeof buf, buf, &err);
  CHECK(Errno(rc) == Errno(-ENOENT));
  std::string msg(err.msg, strnlen(err.msg, sizeof err.msg));
  CHECK_FALSE(msg.empty());
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("a transaction with an unknown op type is refused with EOPNOTSUPP", "[backend][errors]") {
  FreshStore s;
  s.apply(TxnBuilder().mkcoll("c"));
  TxnBuilder t;
  t.raw(9999, "c", "o", {}, "value", 0, 5);
  strata_err err{};
  CHECK(errno_name(s.apply_rc(t, s.last_seq() + 1, &err)) == "EOPNOTSUPP");
  CHECK(std::strlen(err.msg) > 0);
}

TEST_CASE("a store without staged writes refuses a staged write op with EOPNOTSUPP",
          "[backend][errors]") {
  FreshStore s;
  if (s.staged_writes_supported()) {
    SUCCEED("the plugin implements staged writes");
    return;
  }
  s.apply(TxnBuilder().mkcoll("c"));
  CHECK(errno_name(s.apply_rc(TxnBuilder().write_staged("c", "o", 1, 10), s.last_seq() + 1)) ==
        "EOPNOTSUPP");
}

}  // namespace
