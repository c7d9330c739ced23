// Translating a client's op list into reads or one store transaction:
// semantics of each op, guards, and all-or-nothing on failure.
#include "osd/op_exec.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <optional>

#include "msg/crc32c.h"
#include "osd/encoding.h"
#include "osd/object_snaps.h"
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

TEST_CASE(
    "an omap list stops near 1 MiB of keys and values, whatever the count asked, and "
    "pages through everything") {
  // A directory of 16 KiB inline files: 1,000 entries would be 16 MB in one
  // reply, which a peer refuses past 4 MiB.
  Fixture f;
  const size_t n = 300;
  OsdOp set = op(OpCode::kOmapSet);
  for (size_t i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%05zu", i);
    set.keys.push_back(key);
    set.values.push_back(std::string(16 << 10, char('a' + i % 26)));
  }
  REQUIRE(f.write("dir", {op(OpCode::kCreate), set}).rc == 0);
  std::vector<std::string> seen;
  std::string after;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < int(n));
    OsdOp list = op(OpCode::kOmapList);
    list.name = after;
    list.length = 1000;
    auto out = f.read("dir", {list});
    REQUIRE(out.rc == 0);
    const auto &r = out.results[0];
    REQUIRE_FALSE(r.keys.empty());
    size_t bytes = 0;
    for (size_t i = 0; i < r.keys.size(); ++i) bytes += r.keys[i].size() + r.values[i].size();
    CHECK(bytes <= (1u << 20));
    seen.insert(seen.end(), r.keys.begin(), r.keys.end());
    after = r.keys.back();
    if (!r.more) break;
    CHECK(r.keys.size() < 100);  // cut by bytes, not by the 1,000 asked
  }
  REQUIRE(seen.size() == n);
  for (size_t i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "k%05zu", i);
    CHECK(seen[i] == key);
  }
  // Small values: the count asked bounds the page, across the store's chunks.
  OsdOp small = op(OpCode::kOmapSet);
  for (size_t i = 0; i < 200; ++i) {
    small.keys.push_back("s" + std::to_string(1000 + i));
    small.values.push_back("v");
  }
  REQUIRE(f.write("small", {op(OpCode::kCreate), small}).rc == 0);
  OsdOp list = op(OpCode::kOmapList);
  list.length = 150;
  auto out = f.read("small", {list});
  REQUIRE(out.rc == 0);
  CHECK(out.results[0].keys.size() == 150);
  CHECK(out.results[0].more);
  list.length = 200;
  out = f.read("small", {list});
  CHECK(out.results[0].keys.size() == 200);
  CHECK_FALSE(out.results[0].more);
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

// --- object snapshots (object_snaps.h) ---

namespace {

OsdOp snap_op(OpCode c, uint64_t id) {
  OsdOp o = op(c);
  o.version = id;
  return o;
}

OsdOp trim_op(std::vector<uint64_t> keep) {
  OsdOp o = op(OpCode::kSnapTrim);
  for (uint64_t id : keep) {
    std::string k(8, '\0');
    for (int i = 0; i < 8; ++i) k[i] = static_cast<char>(id >> (56 - 8 * i));
    o.keys.push_back(k);
  }
  return o;
}

// The object's data at snapshot `snap` (0: as it is); nullopt when it did
// not exist then.
std::optional<std::string> data_at(Fixture &f, const std::string &oid, uint64_t snap) {
  std::vector<OsdOp> ops;
  if (snap) ops.push_back(snap_op(OpCode::kSetSnap, snap));
  OsdOp r = op(OpCode::kRead);
  ops.push_back(r);
  ExecOutcome out = f.read(oid, ops);
  if (out.rc == -ENOENT) return std::nullopt;
  REQUIRE(out.rc == 0);
  return *out.results.back().data;
}

size_t clones_of(Fixture &f, const std::string &oid, uint64_t *seq = nullptr) {
  ExecOutcome out = f.read(oid, {op(OpCode::kListSnaps)});
  REQUIRE(out.rc == 0);
  if (seq) *seq = out.results[0].size;
  return out.results[0].keys.size();
}

}  // namespace

TEST_CASE("snapshots: a write carrying a snap context preserves the object once per snapshot") {
  Fixture f;
  REQUIRE(f.write("o", {with_data(OpCode::kWriteFull, "one")}).rc == 0);
  // Snapshot 1, then two writes: only the first clones.
  REQUIRE(f.write("o", {snap_op(OpCode::kSnapContext, 1), with_data(OpCode::kWrite, "TWO")}).rc == 0);
  REQUIRE(f.write("o", {snap_op(OpCode::kSnapContext, 1), with_data(OpCode::kWrite, "x", 3)}).rc == 0);
  uint64_t seq = 0;
  CHECK(clones_of(f, "o", &seq) == 1);
  CHECK(seq == 1);
  CHECK(data_at(f, "o", 1) == std::optional<std::string>("one"));
  CHECK(data_at(f, "o", 0) == std::optional<std::string>("TWOx"));
  // Snapshots 2 and 3 taken with no write between: one clone serves both.
  REQUIRE(f.write("o", {snap_op(OpCode::kSnapContext, 3), with_data(OpCode::kWriteFull, "three")}).rc == 0);
  CHECK(clones_of(f, "o") == 2);
  CHECK(data_at(f, "o", 2) == std::optional<std::string>("TWOx"));
  CHECK(data_at(f, "o", 3) == std::optional<std::string>("TWOx"));
  CHECK(data_at(f, "o", 4) == std::optional<std::string>("three"));
  // A snapshot older than the context the object was preserved for is
  // not preserved again.
  REQUIRE(f.write("o", {snap_op(OpCode::kSnapContext, 2), with_data(OpCode::kWriteFull, "four")}).rc == 0);
  CHECK(clones_of(f, "o") == 2);
  // Clones carry xattrs and the version of their time too.
  ExecOutcome st = f.read("o", {snap_op(OpCode::kSetSnap, 1), op(OpCode::kStat)});
  REQUIRE(st.rc == 0);
  CHECK(st.results[1].size == 3);
  CHECK(st.version == 1);
}

TEST_CASE("snapshots: an object created after a snapshot did not exist for it; removing an object "
          "keeps its clones") {
  Fixture f;
  REQUIRE(f.write("n", {snap_op(OpCode::kSnapContext, 5), with_data(OpCode::kWriteFull, "new")}).rc == 0);
  CHECK_FALSE(data_at(f, "n", 5).has_value());
  CHECK(data_at(f, "n", 6) == std::optional<std::string>("new"));
  // Snapshot 6, then the object is removed: 6 still sees it, 7 does not.
  REQUIRE(f.write("n", {snap_op(OpCode::kSnapContext, 6), op(OpCode::kRemove)}).rc == 0);
  CHECK(data_at(f, "n", 6) == std::optional<std::string>("new"));
  CHECK_FALSE(data_at(f, "n", 5).has_value());
  CHECK_FALSE(data_at(f, "n", 0).has_value());
  CHECK(clones_of(f, "n") == 2);
  // A zero of a missing object creates it (empty): snapshots up to the
  // context still see no object.
  OsdOp zero = op(OpCode::kZero);
  zero.length = 10;
  REQUIRE(f.write("z", {snap_op(OpCode::kSnapContext, 2), zero}).rc == 0);
  CHECK_FALSE(data_at(f, "z", 1).has_value());
  CHECK(data_at(f, "z", 3) == std::optional<std::string>(""));
  // Names with a NUL are the OSD's own: a client cannot reach them.
  CHECK(f.read(std::string("n\0snapset", 9), {op(OpCode::kStat)}).rc == -EINVAL);
}

TEST_CASE("snapshots: trim drops what no live snapshot needs, rollback restores a snapshot") {
  Fixture f;
  REQUIRE(f.write("t", {with_data(OpCode::kWriteFull, "v0")}).rc == 0);
  for (uint64_t s = 1; s <= 4; ++s)
    REQUIRE(f.write("t", {snap_op(OpCode::kSnapContext, s),
                          with_data(OpCode::kWriteFull, "v" + std::to_string(s))}).rc == 0);
  CHECK(clones_of(f, "t") == 4);  // clone s holds v(s-1)
  // Snapshots 2 and 4 live on: clones 1 and 3 go.
  REQUIRE(f.write("t", {trim_op({4, 2})}).rc == 0);
  CHECK(clones_of(f, "t") == 2);
  CHECK(data_at(f, "t", 2) == std::optional<std::string>("v1"));
  CHECK(data_at(f, "t", 4) == std::optional<std::string>("v3"));
  CHECK_FALSE(f.s->stat(kColl, clone_object("t", 1)).ok());
  // Rollback to 2, keeping the head for snapshot 5 first.
  REQUIRE(f.write("t", {snap_op(OpCode::kSnapContext, 5), snap_op(OpCode::kSnapRollback, 2)}).rc == 0);
  CHECK(f.data("t") == "v1");
  CHECK(data_at(f, "t", 5) == std::optional<std::string>("v4"));
  // The last snapshot gone: no clone, no snap set object left behind.
  REQUIRE(f.write("t", {trim_op({})}).rc == 0);
  CHECK(clones_of(f, "t") == 0);
  CHECK_FALSE(f.s->stat(kColl, snapset_object("t")).ok());
  auto names = f.s->list_objects(kColl);
  REQUIRE(names.ok());
  CHECK(names->size() == 1);
  // Rollback to a snapshot the object did not exist for removes it.
  REQUIRE(f.write("r", {snap_op(OpCode::kSnapContext, 1), with_data(OpCode::kWriteFull, "r")}).rc == 0);
  REQUIRE(f.write("r", {snap_op(OpCode::kSnapRollback, 1)}).rc == 0);
  CHECK_FALSE(data_at(f, "r", 0).has_value());
  CHECK(f.write("r", {snap_op(OpCode::kSnapRollback, 0)}).rc == -EINVAL);
  // setSnap belongs to reads only.
  CHECK(f.write("r", {snap_op(OpCode::kSetSnap, 1), with_data(OpCode::kWrite, "x")}).rc == -EINVAL);
}
