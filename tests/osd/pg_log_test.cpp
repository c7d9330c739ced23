// The PG log: ordering, the reqid index behind exactly-once answers,
// trimming, divergence rewind, and surviving a restart (reopen).
#include <catch2/catch.hpp>

#include "osd/encoding.h"
#include "osd/pg_log.h"
#include "scratch_store.h"

using namespace strata;
using namespace strata::osd;

namespace {

const std::string kColl = coll_name(PgId{1, 0x1f});

LogEntry entry(uint64_t epoch, uint64_t v, const std::string &oid, const std::string &client = "client.a.1",
               uint64_t tid = 0) {
  LogEntry e;
  e.version = EVersion{epoch, v};
  e.oid = oid;
  e.reqid = ReqId{client, tid ? tid : v};
  e.mtime_ns = 1000 + v;
  return e;
}

void make_coll(osdtest::ScratchStore &s) {
  store::Transaction t;
  t.mkcoll(kColl);
  s.submit(std::move(t));
}

}  // namespace

TEST_CASE("a PG log keeps entries in order and finds a write by who asked for it") {
  osdtest::ScratchStore s;
  make_coll(s);
  PgLog log(kColl);
  store::Transaction t;
  for (uint64_t v = 1; v <= 5; ++v) log.append(entry(3, v, "obj" + std::to_string(v)), t);
  s.submit(std::move(t));
  REQUIRE(log.size() == 5);
  CHECK(log.head() == EVersion{3, 5});
  CHECK(log.tail() == EVersion{});
  const LogEntry *e = log.find(ReqId{"client.a.1", 3});
  REQUIRE(e);
  CHECK(e->oid == "obj3");
  CHECK(e->version == EVersion{3, 3});
  CHECK(log.find(ReqId{"client.b.1", 3}) == nullptr);
  CHECK(log.find(EVersion{3, 4}) != nullptr);
  CHECK(log.find(EVersion{2, 4}) == nullptr);  // same counter, other epoch: another write
  auto after = log.entries_after(EVersion{3, 3});
  REQUIRE(after.size() == 2);
  CHECK(after[0].version.version == 4);
}

TEST_CASE("a PG log survives a restart: entries, tail and reqids come back from the store") {
  osdtest::ScratchStore s;
  make_coll(s);
  {
    PgLog log(kColl);
    store::Transaction t;
    for (uint64_t v = 1; v <= 20; ++v) log.append(entry(2, v, "o" + std::to_string(v % 4)), t);
    s.submit(std::move(t));
    store::Transaction t2;
    REQUIRE(log.trim(8, t2));
    s.submit(std::move(t2));
    CHECK(log.tail() == EVersion{2, 12});
  }
  s.reopen();
  PgLog log(kColl);
  REQUIRE(log.load(*s, EVersion{2, 12}).ok());
  REQUIRE(log.size() == 8);
  CHECK(log.entries().front().version == EVersion{2, 13});
  CHECK(log.head() == EVersion{2, 20});
  CHECK(log.find(ReqId{"client.a.1", 20}) != nullptr);
  // Trimmed entries are gone from the index too: their resends would be
  // new writes (the log is kept long enough that clients resend well within it).
  CHECK(log.find(ReqId{"client.a.1", 5}) == nullptr);
}

TEST_CASE("trimming keeps the newest entries and removes the old keys from the store") {
  osdtest::ScratchStore s;
  make_coll(s);
  PgLog log(kColl);
  store::Transaction t;
  for (uint64_t v = 1; v <= 10; ++v) log.append(entry(1, v, "x"), t);
  s.submit(std::move(t));
  store::Transaction nothing;
  CHECK_FALSE(log.trim(10, nothing));
  CHECK(nothing.empty());
  store::Transaction t2;
  REQUIRE(log.trim(3, t2));
  s.submit(std::move(t2));
  auto keys = s->omap_list(kColl, kPgMetaObject, kLogKeyPrefix, "l/", 0);
  REQUIRE(keys.ok());
  REQUIRE(keys->size() == 3);
  CHECK((*keys)[0].first == log_key(8));
}

TEST_CASE("rewinding drops divergent entries so the authoritative ones can take their place") {
  osdtest::ScratchStore s;
  make_coll(s);
  PgLog log(kColl);
  store::Transaction t;
  for (uint64_t v = 1; v <= 6; ++v) log.append(entry(1, v, "o" + std::to_string(v)), t);
  s.submit(std::move(t));
  store::Transaction t2;
  auto dropped = log.rewind(EVersion{1, 4}, t2);
  REQUIRE(dropped.size() == 2);
  CHECK(dropped[0].version.version == 5);
  CHECK(log.head() == EVersion{1, 4});
  CHECK(log.find(ReqId{"client.a.1", 6}) == nullptr);
  // The authoritative log's entries at the same counters, from a later epoch.
  log.append(entry(4, 5, "other", "client.b.1", 77), t2);
  s.submit(std::move(t2));
  s.reopen();
  PgLog again(kColl);
  REQUIRE(again.load(*s, EVersion{}).ok());
  REQUIRE(again.size() == 5);
  CHECK(again.head() == EVersion{4, 5});
  CHECK(again.find(ReqId{"client.b.1", 77})->oid == "other");
}

TEST_CASE("a backfill target replaces its whole log with the primary's") {
  osdtest::ScratchStore s;
  make_coll(s);
  PgLog log(kColl);
  store::Transaction t;
  for (uint64_t v = 1; v <= 4; ++v) log.append(entry(1, v, "mine"), t);
  s.submit(std::move(t));
  store::Transaction t2;
  log.reset({entry(7, 40, "a"), entry(7, 41, "b")}, EVersion{7, 39}, t2);
  s.submit(std::move(t2));
  s.reopen();
  PgLog again(kColl);
  REQUIRE(again.load(*s, EVersion{7, 39}).ok());
  REQUIRE(again.size() == 2);
  CHECK(again.entries().front().oid == "a");
  CHECK(again.find(ReqId{"client.a.1", 2}) == nullptr);
}

TEST_CASE("log records, infos and missing items keep every field through their encodings") {
  LogEntry e = entry(9, 123, std::string("name with \0 byte", 16), "client.x.ff", 5);
  e.op = LogOp::kDelete;
  e.rc = -2;
  auto e2 = decode_log_entry(encode_log_entry(e));
  REQUIRE(e2.ok());
  CHECK(*e2 == e);
  CHECK_FALSE(decode_log_entry(encode_log_entry(e).substr(0, 10)).ok());

  PgInfo i;
  i.pgid = PgId{3, 0x2a};
  i.last_update = EVersion{5, 10};
  i.log_tail = EVersion{4, 2};
  i.les = 5;
  i.backfill_complete = false;
  i.past_intervals.push_back(PastInterval{2, 4, {1, 2, 3}, 1, true});
  i.current = PastInterval{5, 0, {2, 3}, 2, false};
  auto i2 = decode_pg_info(encode_pg_info(i));
  REQUIRE(i2.ok());
  CHECK(*i2 == i);

  MissingItem m{EVersion{3, 4}, true};
  CHECK(*decode_missing_item(encode_missing_item(m)) == m);
  ObjectInfo oi{EVersion{1, 2}, 99};
  CHECK(*decode_object_info(encode_object_info(oi)) == oi);
  CHECK(log_key(255) < log_key(256));
}

TEST_CASE("PG collection names round-trip and reject anything else") {
  PgId pg{12, 0xabc};
  CHECK(coll_name(pg) == "pg.12.abc");
  CHECK(parse_coll_name("pg.12.abc") == pg);
  CHECK_FALSE(parse_coll_name("osd_meta"));
  CHECK_FALSE(parse_coll_name("pg.12."));
  CHECK_FALSE(parse_coll_name("pg..1"));
  CHECK_FALSE(parse_coll_name("pg.1.xyz"));
  CHECK(pg_str(pg) == "12.abc");
  CHECK_FALSE(valid_object_name(""));
  CHECK_FALSE(valid_object_name(kPgMetaObject));
  CHECK(valid_object_name("a"));
}
