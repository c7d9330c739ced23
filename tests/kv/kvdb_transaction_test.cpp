// kvdb::Transaction: a batch under construction that reads its own writes,
// point and scan, over both engines.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "kvdb/kvdb.h"
#include "temp_dir.h"

using namespace strata;
using namespace std::string_literals;
using Pairs = std::vector<std::pair<std::string, std::string>>;

namespace {

Pairs scan(const kvdb::Transaction &txn, kvdb::IterOptions o = {}) {
  Pairs out;
  auto it = txn.iterate(o);
  for (it->seek_to_first(); it->valid(); it->next())
    out.emplace_back(std::string(it->key()), std::string(it->value()));
  return out;
}

Pairs scan(const kvdb::Database &db) {
  Pairs out;
  auto it = db.iterate();
  for (it->seek_to_first(); it->valid(); it->next())
    out.emplace_back(std::string(it->key()), std::string(it->value()));
  return out;
}

struct Fixture {
  explicit Fixture(kvdb::Engine e) : db(kvdb::Database::open(dir.sub("db"), {.engine = e})) {
    kvdb::Batch b;
    for (std::string k : {"a", "c", "e", "g"}) b.put(k, "db-" + k);
    db->write(b, {});
  }
  test::TempDir dir;
  std::unique_ptr<kvdb::Database> db;
};

}  // namespace

TEST_CASE("a transaction reads its own puts and deletes before commit", "[kvdb][txn]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  INFO(kvdb::engine_name(engine));
  Fixture f(engine);
  kvdb::Transaction txn(*f.db);
  txn.put("b", "new-b");
  txn.put("c", "new-c");
  txn.del("e");
  txn.del("nothing");

  std::string v;
  REQUIRE(txn.get("b", &v));
  CHECK(v == "new-b");
  REQUIRE(txn.get("a", &v));
  CHECK(v == "db-a");
  CHECK_FALSE(txn.get("e", &v));
  CHECK(txn.contains("c"));
  CHECK_FALSE(txn.contains("nothing"));
  CHECK_FALSE(f.db->get("b", &v));  // nothing written yet

  Pairs expect = {{"a", "db-a"}, {"b", "new-b"}, {"c", "new-c"}, {"g", "db-g"}};
  CHECK(scan(txn) == expect);
  txn.commit({});
  CHECK(txn.empty());
  CHECK(scan(*f.db) == expect);
}

TEST_CASE("a transaction's range delete hides database and pending keys until re-put",
          "[kvdb][txn]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  INFO(kvdb::engine_name(engine));
  Fixture f(engine);
  kvdb::Transaction txn(*f.db);
  txn.put("d", "pending-d");
  txn.delete_range("b", "f");  // removes c, d, e
  txn.put("e", "again-e");

  std::string v;
  CHECK_FALSE(txn.get("c", &v));
  CHECK_FALSE(txn.get("d", &v));
  REQUIRE(txn.get("e", &v));
  CHECK(v == "again-e");

  Pairs expect = {{"a", "db-a"}, {"e", "again-e"}, {"g", "db-g"}};
  CHECK(scan(txn) == expect);
  CHECK(scan(txn, {"b", "g"}) == Pairs{{"e", "again-e"}});
  txn.commit({.sync = true});
  CHECK(scan(*f.db) == expect);
}

TEST_CASE("a transaction's scan honours bounds and seek over the merged view", "[kvdb][txn]") {
  auto engine = GENERATE(kvdb::Engine::rocksdb, kvdb::Engine::leveldb);
  INFO(kvdb::engine_name(engine));
  Fixture f(engine);
  kvdb::Transaction txn(*f.db);
  txn.put("f", "new-f");
  txn.put("x", "erased by the range below");
  txn.delete_range("g", "");  // unbounded: to the end of the key space
  txn.put("z", "new-z");

  auto it = txn.iterate({"b", "y"});
  it->seek("d");
  REQUIRE(it->valid());
  CHECK(it->key() == "e");
  it->next();
  REQUIRE(it->valid());
  CHECK(it->key() == "f");
  it->next();
  CHECK_FALSE(it->valid());  // g deleted, z beyond the upper bound
  CHECK(scan(txn, {"f", ""}) == Pairs{{"f", "new-f"}, {"z", "new-z"}});
}

TEST_CASE("take_batch yields an equivalent ordered batch and empties the transaction",
          "[kvdb][txn]") {
  Fixture f(kvdb::Engine::rocksdb);
  kvdb::Transaction txn(*f.db);
  txn.put("x", "1");
  txn.put("x", "2");  // overwritten in place: one put
  txn.delete_range("a", "b");
  txn.del("g");
  CHECK(txn.pending_bytes() > 0);
  kvdb::Batch b = txn.take_batch();
  CHECK(txn.empty());
  REQUIRE(b.count() == 3);
  CHECK(b.ops()[0].type == kvdb::Batch::OpType::delete_range);
  CHECK(b.ops()[1].type == kvdb::Batch::OpType::del);
  CHECK(b.ops()[2].type == kvdb::Batch::OpType::put);
  CHECK(b.ops()[2].value == "2");
}
