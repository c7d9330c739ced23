// White-box cost checks of the kv backend's transaction applier: which keys
// one host transaction turns into (the batch is what the store commits).
#include <catch2/catch.hpp>

#include "kv/key_layout.h"
#include "kv/txn_applier.h"
#include "kvdb/kvdb.h"
#include "temp_dir.h"
#include "txn_builder.h"

using namespace strata;
using strata::conformance::TxnBuilder;
using Op = kvdb::Batch::OpType;

namespace {

constexpr uint64_t kChunk = 64 << 10;

struct Applier {
  Applier() : db(kvdb::Database::open(dir.sub("db"), {})) { commit(TxnBuilder().mkcoll("c")); }

  // Applies the ops into a fresh transaction and returns its batch (also written).
  kvdb::Batch commit(const TxnBuilder &t) {
    kvdb::Transaction txn(*db);
    kv::TxnApplier applier(txn, kChunk);
    for (const strata_op &op : t.ops()) applier.apply(op);
    kvdb::Batch b = txn.take_batch();
    db->write(b, {});
    return b;
  }

  test::TempDir dir;
  std::unique_ptr<kvdb::Database> db;
};

size_t count(const kvdb::Batch &b, Op type) {
  size_t n = 0;
  for (auto &op : b.ops()) n += op.type == type;
  return n;
}

}  // namespace

TEST_CASE("a 4 KiB overwrite of a 4 MiB object rewrites exactly one chunk", "[kv][cost]") {
  Applier a;
  a.commit(TxnBuilder().write_full("c", "o", std::string(4 << 20, 'x')));
  kvdb::Batch b = a.commit(TxnBuilder().write("c", "o", (1 << 20) + 512, std::string(4096, 'y')));
  REQUIRE(b.count() == 1);  // not even the onode: the size did not change
  CHECK(b.ops()[0].type == Op::put);
  CHECK(b.ops()[0].key == kv::ObjectKeys("c", "o").chunk(16));
  CHECK(b.ops()[0].value.size() == kChunk);
}

TEST_CASE("creating a 4 KiB object writes its onode and one short chunk", "[kv][cost]") {
  Applier a;
  kvdb::Batch b = a.commit(TxnBuilder().write("c", "new", 0, std::string(4096, 'n')));
  CHECK(b.count() == 2);
  CHECK(count(b, Op::put) == 2);
  kv::ObjectKeys k("c", "new");
  for (auto &op : b.ops())
    if (op.key == k.chunk(0)) CHECK(op.value.size() == 4096);
}

TEST_CASE("all-zero chunks are not stored", "[kv][cost]") {
  Applier a;
  kvdb::Batch b = a.commit(TxnBuilder().write("c", "z", 0, std::string(3 * kChunk, '\0')));
  CHECK(b.count() == 1);  // the onode only: the data is sparse
}

TEST_CASE("removing a small object deletes its keys one by one", "[kv][cost]") {
  Applier a;
  a.commit(TxnBuilder().write("c", "s", 0, "data").setxattr("c", "s", "x", "1"));
  kvdb::Batch b = a.commit(TxnBuilder().remove("c", "s"));
  CHECK(count(b, Op::del) == 3);  // chunk, xattr, onode
  CHECK(count(b, Op::delete_range) == 0);
}

TEST_CASE("removing a large object costs one range delete, not one per chunk", "[kv][cost]") {
  Applier a;
  a.commit(TxnBuilder().write_full("c", "big", std::string(16 << 20, 'b')));  // 256 chunks
  kvdb::Batch b = a.commit(TxnBuilder().remove("c", "big"));
  CHECK(count(b, Op::delete_range) == 1);
  CHECK(b.count() < 5);
}

TEST_CASE("ops of one transaction see the writes of earlier ops", "[kv][cost]") {
  Applier a;
  kvdb::Batch b = a.commit(TxnBuilder()
                               .write("c", "o", 0, "abcdef")
                               .write("c", "o", 2, "XY")
                               .clone("c", "o", "p")
                               .truncate("c", "o", 3));
  kv::ObjectKeys o("c", "o"), p("c", "p");
  std::string v;
  REQUIRE(a.db->get(p.chunk(0), &v));
  CHECK(v == "abXYef");
  REQUIRE(a.db->get(o.chunk(0), &v));
  CHECK(v == "abX");
}
