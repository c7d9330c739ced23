// Translating a client's op list into reads or one store transaction:
// semantics of each op, guards, and all-or-nothing on failure.
#include <catch2/catch.hpp>

#include "msg/crc32c.h"
#include "osd/encoding.h"
#include "osd/op_exec.h"
#include "scratch_store.h"

using namespace strata;
using namespace strata::osd;

namespace {

const std::string kColl = coll_name(PgId{2, 7});

OsdOp op(OpCode c) {
  OsdOp o;
  o.code = c;
  return o;
}
OsdOp with_data(OpCode c, std::string d, uint64_t off = 0) {
  OsdOp o = op(c);
  o.data = std::move(d);
  o.offset = off;
  return o;
}
OsdOp named(OpCode c, std::string name, std::string d = {}) {
  OsdOp o = op(c);
  o.name = std::move(name);
  o.data = std::move(d);
  return o;
}

struct Fixture {
  osdtest::ScratchStore s;
  uint64_t next = 1;
  Fixture() {
    store::Transaction t;
    t.mkcoll(kColl);
    s.submit(std::move(t));
  }
  // Runs a write list; applies it when it built a transaction.
  ExecOutcome write(const std::string &oid, std::vector<OsdOp> ops) {
    store::Transaction t;
    // Like the primary: a version is used only by a write that applies.
    ObjectInfo oi{EVersion{5, next}, 123456789};
    ExecOutcome out = execute_ops(*s, kColl, oid, ops, oi, &t);
    if (out.rc == 0 && out.mutated) {
      s.submit(std::move(t));
      ++next;
    } else {
      CHECK(t.empty());
    }
    return out;
  }
  ExecOutcome read(const std::string &oid, std::vector<OsdOp> ops) {
    return execute_ops(*s, kColl, oid, ops, ObjectInfo{}, nullptr);
  }
  std::string data(const std::string &oid) {
    auto d = s->read(kColl, oid);
    REQUIRE(d.ok());
    return *d;
  }
};

}  // namespace

TEST_CASE("writes, appends and truncates become one transaction with the object's version") {
  Fixture f;
  auto out = f.write("o", {with_data(OpCode::kWriteFull, "hello"), with_data(OpCode::kAppend, " world")});
  REQUIRE(out.rc == 0);
  CHECK(out.mutated);
  CHECK(out.log_op == LogOp::kModify);
  CHECK(out.version == 1);
  CHECK(f.data("o") == "hello world");
  // An append lands at the size the primary knows: replicas get an
  // absolute write and end with the same bytes.
  f.write("o", {with_data(OpCode::kAppend, "!")});
  CHECK(f.data("o") == "hello world!");
  OsdOp tr = op(OpCode::kTruncate);
  tr.offset = 5;
  f.write("o", {tr, with_data(OpCode::kWrite, "XY", 7)});
  CHECK(f.data("o") == std::string("hello\0\0XY", 9));
  auto st = f.read("o", {op(OpCode::kStat)});
  REQUIRE(st.rc == 0);
  CHECK(st.results[0].size == 9);
  CHECK(st.results[0].mtime_ns == 123456789);
  CHECK(st.version == 3);
}

TEST_CASE("reads return data, xattrs and omap; missing objects read as ENOENT") {
  Fixture f;
  OsdOp set = op(OpCode::kOmapSet);
  set.keys = {"a", "b", "c"};
  set.values = {"1", "2", "3"};
  f.write("o", {with_data(OpCode::kWriteFull, "0123456789"), named(OpCode::kSetXattr, "color", "blue"),
                set, with_data(OpCode::kOmapSetHeader, "hdr")});
  OsdOp rd = op(OpCode::kRead);
  rd.offset = 2;
  rd.length = 3;
  OsdOp keys = op(OpCode::kOmapGetByKeys);
  keys.keys = {"b", "zz"};
  OsdOp list = op(OpCode::kOmapList);
  list.name = "a";
  list.length = 1;
  auto out = f.read("o", {rd, named(OpCode::kGetXattr, "color"), op(OpCode::kGetXattrs), keys, list,
                          op(OpCode::kOmapGetHeader)});
  REQUIRE(out.rc == 0);
  CHECK(*out.results[0].data == "234");
  CHECK(*out.results[1].data == "blue");
  // Only user xattrs, without the internal object info.
  REQUIRE(out.results[2].keys == std::vector<std::string>{"color"});
  CHECK(out.results[3].keys == std::vector<std::string>{"b"});
  CHECK(out.results[4].keys == std::vector<std::string>{"b"});
  CHECK(out.results[4].more);
  CHECK(*out.results[5].data == "hdr");
  CHECK(f.read("o", {named(OpCode::kGetXattr, "nope")}).rc == -ENODATA);
  CHECK(f.read("missing", {op(OpCode::kRead)}).rc == -ENOENT);
  CHECK(f.read("missing", {op(OpCode::kStat)}).rc == -ENOENT);
}

TEST_CASE("a failing guard stops the list and nothing of it is applied") {
  Fixture f;
  f.write("o", {with_data(OpCode::kWriteFull, "v1"), named(OpCode::kSetXattr, "tag", "b")});
  OsdOp cmp = named(OpCode::kCmpXattr, "tag", "a");
  cmp.cmp = CmpMode::kEq;
  auto out = f.write("o", {cmp, with_data(OpCode::kWriteFull, "v2")});
  CHECK(out.rc == -ECANCELED);
  CHECK_FALSE(out.mutated);
  REQUIRE(out.results.size() == 1);  // up to the failing op
  CHECK(f.data("o") == "v1");
  cmp.cmp = CmpMode::kGt;  // "b" > "a"
  CHECK(f.write("o", {cmp, with_data(OpCode::kWriteFull, "v2")}).rc == 0);
  CHECK(f.data("o") == "v2");

  OsdOp av = op(OpCode::kAssertVersion);
  av.version = 1;  // it is at 2 now
  CHECK(f.write("o", {av, with_data(OpCode::kWriteFull, "v3")}).rc == -ERANGE);
  av.version = 2;
  CHECK(f.write("o", {av, with_data(OpCode::kWriteFull, "v3")}).rc == 0);
  CHECK(f.write("new", {op(OpCode::kAssertExists), with_data(OpCode::kWriteFull, "x")}).rc == -ENOENT);
  CHECK_FALSE(f.s->stat(kColl, "new").ok());
}

TEST_CASE("create, remove and the ops that never create an object") {
  Fixture f;
  OsdOp excl = op(OpCode::kCreate);
  excl.flags = kCreateExclusive;
  CHECK(f.write("o", {excl}).rc == 0);
  CHECK(f.write("o", {excl}).rc == -EEXIST);
  CHECK(f.write("o", {op(OpCode::kCreate)}).rc == 0);
  auto rm = f.write("o", {op(OpCode::kRemove)});
  CHECK(rm.rc == 0);
  CHECK(rm.log_op == LogOp::kDelete);
  CHECK(f.write("o", {op(OpCode::kRemove)}).rc == -ENOENT);
  // Removing keys or xattrs of a missing object fails instead of creating it.
  OsdOp rmk = op(OpCode::kOmapRmKeys);
  rmk.keys = {"a"};
  CHECK(f.write("o", {rmk}).rc == -ENOENT);
  CHECK(f.write("o", {op(OpCode::kOmapClear)}).rc == -ENOENT);
  CHECK(f.write("o", {named(OpCode::kRmXattr, "x")}).rc == -ENOENT);
  CHECK_FALSE(f.s->stat(kColl, "o").ok());
  f.write("o", {with_data(OpCode::kWriteFull, "d")});
  CHECK(f.write("o", {named(OpCode::kRmXattr, "x")}).rc == -ENODATA);
  // Remove then write in one list: the object is replaced.
  auto again = f.write("o", {op(OpCode::kRemove), with_data(OpCode::kWriteFull, "fresh")});
  CHECK(again.rc == 0);
  CHECK(again.log_op == LogOp::kModify);
  CHECK(f.data("o") == "fresh");
}

TEST_CASE("the object info xattr carries the version replicas and scrub compare") {
  Fixture f;
  f.write("o", {with_data(OpCode::kWriteFull, "a")});
  f.write("o", {with_data(OpCode::kAppend, "b")});
  auto st = load_object_state(*f.s, kColl, "o");
  REQUIRE(st.ok());
  CHECK(st->exists);
  CHECK(st->size == 2);
  CHECK(st->oi.version == EVersion{5, 2});
  auto none = load_object_state(*f.s, kColl, "nothing");
  REQUIRE(none.ok());
  CHECK_FALSE(none->exists);
  CHECK(f.read(std::string(kPgMetaObject), {op(OpCode::kStat)}).rc == -EINVAL);
  CHECK(f.write("o", {named(OpCode::kSetXattr, "", "v")}).rc == -EINVAL);
}

TEST_CASE("the object info keeps a data digest while the whole data is known, and drops it otherwise") {
  Fixture f;
  auto digest = [&](const std::string &oid) {
    auto st = load_object_state(*f.s, kColl, oid);
    REQUIRE(st.ok());
    return st->oi.has_data_digest ? std::optional<uint32_t>(st->oi.data_digest) : std::nullopt;
  };
  auto crc = [](const std::string &d) { return msg::crc32c(d.data(), d.size()); };
  f.write("o", {with_data(OpCode::kWriteFull, "hello")});
  CHECK(digest("o") == crc("hello"));
  f.write("o", {with_data(OpCode::kAppend, " world")});
  CHECK(digest("o") == crc("hello world"));
  f.write("o", {named(OpCode::kSetXattr, "k", "v")});  // no data change, but not read back
  CHECK(digest("o") == std::nullopt);
  f.write("o", {with_data(OpCode::kWriteFull, "abcdef")});
  CHECK(digest("o") == crc("abcdef"));
  f.write("o", {with_data(OpCode::kWrite, "X", 2)});  // in place: the digest would be stale
  CHECK(digest("o") == std::nullopt);
  OsdOp tr = op(OpCode::kTruncate);
  tr.offset = 0;
  f.write("o", {tr, with_data(OpCode::kAppend, "new")});
  CHECK(digest("o") == crc("new"));
  OsdOp create = op(OpCode::kCreate);
  create.flags = kCreateExclusive;
  f.write("fresh", {create, with_data(OpCode::kAppend, "xyz")});
  CHECK(digest("fresh") == crc("xyz"));
}

TEST_CASE("a whole-object read that fails the data digest is caught, a partial read is not checked") {
  Fixture f;
  f.write("o", {with_data(OpCode::kWriteFull, "0123456789")});
  OsdOp whole = op(OpCode::kRead);
  OsdOp part = op(OpCode::kRead);
  part.length = 4;
  CHECK(check_data_digest({whole}, f.read("o", {whole})).empty());
  // The bytes change behind the OSD's back (same size, object info kept).
  store::Transaction t;
  t.write(kColl, "o", 3, "###");
  f.s.submit(std::move(t));
  std::string why = check_data_digest({whole}, f.read("o", {whole}));
  CHECK(why.find("data digest mismatch") != std::string::npos);
  CHECK(check_data_digest({part}, f.read("o", {part})).empty());
  auto st = load_object_state(*f.s, kColl, "o");
  REQUIRE(st.ok());
  CHECK_FALSE(data_digest_mismatch(st->oi, f.data("o")).empty());
  CHECK(data_digest_mismatch(st->oi, "0123456789").empty());
  // Object infos written before the digest existed decode without one.
  ObjectInfo old{EVersion{1, 2}, 3};
  auto dec = decode_object_info(encode_object_info(old));
  REQUIRE(dec.ok());
  CHECK_FALSE(dec->has_data_digest);
}
