// kv backend, durability: exact replay, reopen, journal-less sync mode,
// crashes, mkfs/open checks, fsck.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "kv/key_layout.h"
#include "kv/onode.h"
#include "kv_harness.h"
#include "kvdb/kvdb.h"

using namespace strata::test;
using Names = std::vector<std::string>;

TEST_CASE("replaying a transaction at or below the applied seq changes nothing",
          "[kv][durability]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, "first"));
  h.apply(2, TxnBuilder().omap_set("c", "o", "k", "v"));
  // A replay of seq 1 and 2 carrying different ops must be skipped entirely.
  h.apply(1, TxnBuilder().write_full("c", "o", "REPLAYED").remove("c", "o"));
  h.apply(2, TxnBuilder().omap_clear("c", "o").clone("c", "o", "copy"));
  CHECK(h.read("c", "o", 0, 100) == "first");
  CHECK(h.omap_get("c", "o", "k") == "v");
  CHECK_FALSE(h.exists("c", "copy"));
  h.checkpoint(2);
  h.reopen();
  h.apply(2, TxnBuilder().remove("c", "o"));
  CHECK(h.exists("c", "o"));
  h.apply(3, TxnBuilder().remove("c", "o"));
  CHECK_FALSE(h.exists("c", "o"));
}

TEST_CASE("data survives a clean close and reopen; committed_seq follows checkpoints",
          "[kv][durability]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  CHECK(h.committed_seq() == 0);
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, "abc").setxattr("c", "o", "x", "y"));
  h.apply(2, TxnBuilder().omap_set("c", "o", "k", "v"));
  h.checkpoint(2);
  CHECK(h.committed_seq() == 2);
  h.apply(3, TxnBuilder().write("c", "o", 3, "def"));
  h.reopen();  // a clean close keeps seq 3 too
  CHECK(h.committed_seq() == 3);
  CHECK(h.read("c", "o", 0, 10) == "abcdef");
  CHECK(h.getxattr("c", "o", "x") == "y");
  CHECK(h.omap_get("c", "o", "k") == "v");
  CHECK(h.usage().n_objects == 1);
  // A checkpoint of a seq beyond the last applied one is remembered too.
  h.checkpoint(10);
  CHECK(h.committed_seq() == 10);
  h.reopen();
  CHECK(h.committed_seq() == 10);
}

TEST_CASE("a STRATA_TXN_SYNC transaction is committed when apply returns", "[kv][durability]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"));
  h.apply(1, TxnBuilder().mkcoll("c"), STRATA_TXN_SYNC);
  CHECK(h.committed_seq() == 1);
  h.apply(2, TxnBuilder().write("c", "o", 0, "x"));  // journaled: not yet
  CHECK(h.committed_seq() == 1);
  h.apply(3, TxnBuilder().write("c", "o", 1, "y"), STRATA_TXN_SYNC);
  CHECK(h.committed_seq() == 3);
  CHECK(h.read("c", "o", 0, 10) == "xy");
  CHECK(h.ops().capabilities(h.os()) & STRATA_OS_CAP_SELF_DURABLE);
  CHECK(h.ops().capabilities(h.os()) & STRATA_OS_CAP_EXACT_REPLAY);
}

TEST_CASE("after a crash the store holds exactly the transactions up to committed_seq",
          "[kv][durability]") {
  const std::string engine = GENERATE(as<std::string>{}, "rocksdb", "leveldb");
  const std::string mode = GENERATE(as<std::string>{}, "journaled", "sync", "mixed");
  INFO(engine << " " << mode);
  const uint64_t checkpoint_at = 4, last = 9;
  KvHarness h(engine);
  h.apply(0 + 1, TxnBuilder().mkcoll("c"));  // seq 1 is the helper's first too: skipped there
  h.checkpoint(1);
  h.close();

  std::string cmd = std::string(STRATA_KV_CRASH_HELPER) + " " + h.path() + " " + engine + " " +
                    mode + " " + std::to_string(checkpoint_at) + " " + std::to_string(last);
  int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  h.open();
  const uint64_t committed = h.committed_seq();
  if (mode == "journaled") {
    CHECK(committed >= checkpoint_at);
    // RocksDB skipped its log: everything after the checkpoint was lost.
    if (engine == "rocksdb") CHECK(committed == checkpoint_at);
  } else {
    CHECK(committed == last);
  }
  // A prefix, exactly: objects up to committed_seq, none after.
  for (uint64_t seq = 2; seq <= last; ++seq) {
    INFO("seq " << seq);
    CHECK(h.exists("c", "o" + std::to_string(seq)) == (seq <= committed));
  }
  // The host replays its journal from seq 1; what is there is skipped.
  for (uint64_t seq = 1; seq <= last; ++seq) {
    std::string n = std::to_string(seq);
    h.apply(seq, TxnBuilder().write("c", "o" + n, 0, "data" + n).write_full("c", "counter", n));
  }
  CHECK(h.read("c", "counter", 0, 10) == std::to_string(last));
  CHECK(h.read("c", "o2", 0, 10) == "data2");
  CHECK(h.fsck() == 0);
}

TEST_CASE("mkfs refuses a directory that already holds a kv store", "[kv][durability]") {
  KvHarness h("rocksdb");
  h.close();
  CHECK(h.mkfs() == -EEXIST);
  CHECK(h.last_error().find(h.path()) != std::string::npos);
}

TEST_CASE("open refuses a store made with the other engine, naming both", "[kv][durability]") {
  KvHarness h("leveldb");
  h.close();
  h.set_option("kv_engine", "rocksdb");
  CHECK(h.try_open() == -EINVAL);
  CHECK(h.last_error().find("leveldb") != std::string::npos);
}

TEST_CASE("the chunk size is fixed at mkfs; a different option does not change the layout",
          "[kv][durability]") {
  KvHarness h(GENERATE(as<std::string>{}, "rocksdb", "leveldb"), "4K");
  std::string data(10000, 'c');
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, data));
  h.close();
  h.set_option("kv_chunk_size", "1M");
  h.open();
  CHECK(h.read("c", "o", 0, 20000) == data);
  h.apply(2, TxnBuilder().write("c", "o", 5000, "X"));
  CHECK(h.fsck() == 0);
  bool logged = false;
  for (auto &l : h.log_lines()) logged |= l.find("chunk size 4096") != std::string::npos;
  CHECK(logged);
}

TEST_CASE("fsck counts and names inconsistent keys", "[kv][durability]") {
  const std::string engine = GENERATE(as<std::string>{}, "rocksdb", "leveldb");
  KvHarness h(engine);
  h.apply(1, TxnBuilder().mkcoll("c").write("c", "o", 0, "100 bytes or so"));
  CHECK(h.fsck() == 0);
  h.close();
  {
    using namespace strata;
    auto db = kvdb::Database::open(
        h.path() + "/db", {.engine = kvdb::engine_from_name(engine), .create_if_missing = false});
    kvdb::Batch b;
    b.put(kv::ObjectKeys("c", "o").chunk(7), "beyond the size");
    b.put(kv::ObjectKeys("c", "ghost").xattr("x"), "orphan");
    b.put(kv::ObjectKeys("nocoll", "o").onode(), kv::encode_onode({}));
    db->write(b, {.sync = true});
  }
  h.open();
  // chunk past the size, orphan payload, onode without collection, count mismatch
  CHECK(h.fsck() == 4);
  std::string all;
  for (auto &l : h.log_lines()) all += l + "\n";
  CHECK(all.find("c/o") != std::string::npos);
  CHECK(all.find("c/ghost") != std::string::npos);
  CHECK(all.find("nocoll/o") != std::string::npos);
}
