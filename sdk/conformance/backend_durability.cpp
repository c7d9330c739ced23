// Checkpoints, committed_seq, reopen, and replay: what the host's recovery
// relies on (see "Division of labour with the host" in objectstore.h).
#include <catch2/catch.hpp>

#include "backend_workload.h"
#include "kit.h"

namespace {
using namespace strata::conformance;

// Applies txns[from..] with their seq = index + 1.
void apply_range(FreshStore &s, const std::vector<TxnBuilder> &txns, size_t from) {
  for (size_t i = from; i < txns.size(); ++i) s.apply_at(txns[i], i + 1);
}

TEST_CASE("a checkpoint makes committed_seq report the checkpointed seq", "[backend][durability]") {
  FreshStore s;
  std::vector<TxnBuilder> txns = mixed_workload(10, 1);
  apply_range(s, txns, 0);
  s.checkpoint(10);
  CHECK(s.committed_seq() == 10);
  s.apply_at(TxnBuilder().write("w.a", "later", 0, "x"), 11);
  s.checkpoint(11);
  CHECK(s.committed_seq() == 11);
}

TEST_CASE("everything checkpointed is there after reopen, and so is committed_seq",
          "[backend][durability]") {
  FreshStore s;
  std::vector<TxnBuilder> txns = mixed_workload(60, 2);
  apply_range(s, txns, 0);
  s.apply_at(
      TxnBuilder().clone("w.a", "obj1", "cloned").write("w.a", "big", 0, pattern_bytes(3 << 20, 9)),
      61);
  s.checkpoint(61);
  std::string before = s.dump();
  s.reopen();
  CHECK(s.committed_seq() == 61);
  CHECK(s.dump() == before);
}

TEST_CASE("each of several checkpoints in a row persists its state", "[backend][durability]") {
  FreshStore s;
  std::vector<TxnBuilder> txns = mixed_workload(40, 3);
  for (size_t i = 0; i < txns.size(); ++i) {
    s.apply_at(txns[i], i + 1);
    if ((i + 1) % 10 == 0) s.checkpoint(i + 1);
  }
  std::string before = s.dump();
  s.reopen();
  CHECK(s.committed_seq() == 40);
  CHECK(s.dump() == before);
  // And the reopened store goes on checkpointing.
  s.apply_at(TxnBuilder().write("w.b", "after", 0, "more"), 41);
  s.checkpoint(41);
  s.reopen();
  CHECK(s.committed_seq() == 41);
  CHECK(same_bytes(s.read_all("w.b", "after"), "more"));
}

TEST_CASE("re-applying a suffix of transactions without clones leaves the state unchanged",
          "[backend][durability]") {
  FreshStore s;
  if (s.has_cap(STRATA_OS_CAP_ROLLBACK_CHECKPOINT)) {
    SUCCEED(
        "rollback store: the host never re-applies on top of newer state; see the "
        "rollback test");
    return;
  }
  std::vector<TxnBuilder> txns = mixed_workload(80, 4);
  apply_range(s, txns, 0);
  std::string after = s.dump();
  for (size_t k : {79u, 60u, 31u, 1u}) {
    INFO("re-applying from seq " << k + 1);
    apply_range(s, txns, k);
    REQUIRE(s.dump() == after);
  }
}

TEST_CASE("after a reopen without checkpoint, replaying from committed_seq restores the state",
          "[backend][durability]") {
  // What crash recovery does: the journal holds every transaction after the
  // last checkpoint; the host replays those after committed_seq().
  FreshStore s;
  std::vector<TxnBuilder> txns = mixed_workload(70, 5);
  apply_range(s, txns, 0);
  // A clone, checkpointed right away as the host does unless the store has
  // exact replay.
  txns.push_back(TxnBuilder().clone("w.a", "obj2", "snap").write("w.a", "snap", 0, "s"));
  s.apply_at(txns.back(), txns.size());
  s.checkpoint(txns.size());
  uint64_t checkpointed = txns.size();
  std::vector<TxnBuilder> more = mixed_workload(40, 6);
  for (size_t i = 1; i < more.size(); ++i) txns.push_back(more[i]);
  apply_range(s, txns, checkpointed);
  std::string expect = s.dump();

  s.close();
  s.reopen();
  uint64_t committed = s.committed_seq();
  REQUIRE(committed >= checkpointed);
  REQUIRE(committed <= txns.size());
  apply_range(s, txns, committed);
  CHECK(s.dump() == expect);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a rollback store reopened without checkpoint is exactly its checkpointed state",
          "[backend][durability]") {
  FreshStore s;
  if (!s.has_cap(STRATA_OS_CAP_ROLLBACK_CHECKPOINT)) {
    SUCCEED("the store does not claim STRATA_OS_CAP_ROLLBACK_CHECKPOINT");
    return;
  }
  std::vector<TxnBuilder> txns = mixed_workload(30, 7);
  apply_range(s, txns, 0);
  s.checkpoint(30);
  std::string at_checkpoint = s.dump();
  s.apply_at(TxnBuilder()
                 .write("w.a", "obj1", 0, "changed after the checkpoint")
                 .remove("w.b", "obj2")
                 .mkcoll("new.coll")
                 .write("new.coll", "o", 0, "x")
                 .rmcoll("w.tmp0")
                 .setxattr("w.a", "obj3", "x9", "late")
                 .omap_clear("w.b", "obj4"),
             31);
  REQUIRE(s.dump() != at_checkpoint);
  s.reopen();
  CHECK(s.committed_seq() == 30);
  CHECK(s.dump() == at_checkpoint);
}

TEST_CASE("a store reopened twice without changes in between is unchanged",
          "[backend][durability]") {
  FreshStore s;
  std::vector<TxnBuilder> txns = mixed_workload(20, 8);
  apply_range(s, txns, 0);
  s.checkpoint(20);
  std::string before = s.dump();
  s.reopen();
  s.reopen();
  CHECK(s.dump() == before);
  CHECK(s.committed_seq() == 20);
}

}  // namespace
