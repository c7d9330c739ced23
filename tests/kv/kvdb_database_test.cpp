// kvdb::Database over both engines: point reads, ordered bounded scans,
// atomic batches with range deletes, flush and reopen.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "kvdb/kvdb.h"
#include "strata/cpp/plugin_support.hpp"
#include "temp_dir.h"

using namespace strata;
using namespace std::string_literals;

namespace {

std::vector<std::string> scan(kvdb::Iterator &it) {
  std::vector<std::string> out;
  for (; it.valid(); it.next()) out.emplace_back(it.key());
  return out;
}

std::vector<std::string> all_keys(const kvdb::Database &db, kvdb::IterOptions o = {}) {
  auto it = db.iterate(o);
  it->seek_to_first();
  return scan(*it);
}

}  // namespace

TEST_CASE("a database answers point reads and scans keys in bytewise order", "[kvdb]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  INFO(kvdb::engine_name(engine));
  test::TempDir dir;
  auto db = kvdb::Database::open(dir.sub("db"), {.engine = engine});

  kvdb::Batch b;
  for (std::string k : {"b"s, "a"s, "\xff"s, "\x01"s, "a\0"s, "c"s}) b.put(k, "v" + k);
  db->write(b, {});

  std::string v;
  REQUIRE(db->get("a\0"s, &v));
  CHECK(v == "va\0"s);
  CHECK_FALSE(db->get("zz", &v));
  CHECK(all_keys(*db) == std::vector<std::string>{"\x01"s, "a"s, "a\0"s, "b"s, "c"s, "\xff"s});
  CHECK(all_keys(*db, {"a\0"s, "c"}) == std::vector<std::string>{"a\0"s, "b"s});

  auto it = db->iterate({"a", ""});
  it->seek("\x01");  // below the lower bound: clamps to it
  REQUIRE(it->valid());
  CHECK(it->key() == "a");
  it->seek("b");
  REQUIRE(it->valid());
  CHECK(it->value() == "vb");
}

TEST_CASE("a batch with a range delete applies in order and atomically", "[kvdb]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  INFO(kvdb::engine_name(engine));
  test::TempDir dir;
  auto db = kvdb::Database::open(dir.sub("db"), {.engine = engine});
  kvdb::Batch setup;
  for (std::string k : {"k1", "k2", "k3", "k4"}) setup.put(k, "old");
  db->write(setup, {.sync = true});

  kvdb::Batch b;
  b.put("k25", "put before the range: removed");
  b.delete_range("k2", "k4");
  b.put("k3", "put after the range: kept");
  b.del("k1");
  db->write(b, {});
  CHECK(all_keys(*db) == std::vector<std::string>{"k3", "k4"});
  std::string v;
  REQUIRE(db->get("k3", &v));
  CHECK(v == "put after the range: kept");

  kvdb::Batch to_end;
  to_end.delete_range("k3", "");
  db->write(to_end, {});
  CHECK(all_keys(*db).empty());
}

TEST_CASE("writes survive flush and reopen, also when they skipped the WAL", "[kvdb]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  INFO(kvdb::engine_name(engine));
  test::TempDir dir;
  {
    auto db = kvdb::Database::open(dir.sub("db"), {.engine = engine});
    kvdb::Batch b;
    b.put("unlogged", "1");
    db->write(b, {.disable_wal = true});
    kvdb::Batch c;
    c.put("logged", "2");
    db->write(c, {.sync = true});
    db->flush();
  }
  auto db = kvdb::Database::open(dir.sub("db"), {.engine = engine, .create_if_missing = false});
  CHECK(all_keys(*db) == std::vector<std::string>{"logged", "unlogged"});
  CHECK(db->disk_bytes() > 0);
}

TEST_CASE("opening a missing database without create fails with ENOENT naming the path", "[kvdb]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  test::TempDir dir;
  try {
    kvdb::Database::open(dir.sub("nothing"), {.engine = engine, .create_if_missing = false});
    FAIL("open succeeded");
  } catch (const sdk::Error &e) {
    CHECK(e.code() == -ENOENT);
    CHECK(std::string(e.what()).find(dir.sub("nothing")) != std::string::npos);
  }
}

TEST_CASE("an unknown engine name is refused", "[kvdb]") {
  CHECK(kvdb::engine_from_name("leveldb") == kvdb::Engine::leveldb);
  CHECK_THROWS_AS(kvdb::engine_from_name("bdb"), sdk::Error);
}

TEST_CASE("after flush no older, unsynced LevelDB log file is still needed", "[kvdb]") {
  test::TempDir dir;
  // A tiny memtable: the writes below switch logs several times.
  auto db = kvdb::Database::open(dir.sub("db"),
                                 {.engine = kvdb::Engine::leveldb, .write_buffer_bytes = 64 << 10});
  for (int i = 0; i < 200; ++i) {
    kvdb::Batch b;
    b.put("key" + std::to_string(i), std::string(4096, 'v'));
    db->write(b, {});
  }
  db->flush();
  size_t logs = 0;
  for (auto &entry : std::filesystem::directory_iterator(dir.sub("db")))
    logs += entry.path().extension() == ".log";
  CHECK(logs == 1);
  std::string v;
  CHECK(db->get("key0", &v));
}
