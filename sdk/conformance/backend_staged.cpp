// ABI 1.1 staged writes: large data stored before its transaction and bound
// to an object by STRATA_OP_WRITE_STAGED. Only for stores that offer them.
#include <catch2/catch.hpp>
#include <set>

#include "kit.h"

namespace {
using namespace strata::conformance;

constexpr char kColl[] = "st";

// Returns false (and says why) when the plugin has no staged writes.
bool staged_writes_apply(const FreshStore &s) {
  if (s.staged_writes_supported()) return true;
  SUCCEED("the plugin does not offer staged writes (ABI 1.1, STRATA_OS_CAP_STAGED_WRITES)");
  return false;
}

// Returns false (and says why) when the plugin predates stage_release.
bool stage_release_applies(const FreshStore &s) {
  if (!staged_writes_apply(s)) return false;
  if (s.stage_release_supported()) return true;
  SUCCEED("the plugin predates stage_release (ABI 1.2)");
  return false;
}

TEST_CASE("staged bytes bound by a transaction replace the object's data", "[backend][staged]") {
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  s.apply(TxnBuilder()
              .mkcoll(kColl)
              .write(kColl, "o", 0, pattern_bytes(3 << 20, 41))
              .setxattr(kColl, "o", "x", "kept")
              .omap_set(kColl, "o", "k", "kept"));
  std::string bytes = pattern_bytes(1 << 20, 42);
  uint64_t id = s.stage_write(bytes);
  s.apply(TxnBuilder().write_staged(kColl, "o", id, bytes.size()));
  CHECK(s.size(kColl, "o") == bytes.size());
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
  CHECK(s.getxattr(kColl, "o", "x") == "kept");
  CHECK(s.omap_get(kColl, "o", "k") == "kept");
}

TEST_CASE("a staged write creates a missing object", "[backend][staged]") {
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  uint64_t id = s.stage_write("fresh");
  s.apply(TxnBuilder().write_staged(kColl, "new", id, 5));
  CHECK(same_bytes(s.read_all(kColl, "new"), "fresh"));
}

TEST_CASE("stage ids are non-zero and distinct", "[backend][staged]") {
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  std::set<uint64_t> ids;
  for (int i = 0; i < 20; ++i) {
    uint64_t id = s.stage_write(pattern_bytes(100, i));
    CHECK(id > 0);
    ids.insert(id);
  }
  CHECK(ids.size() == 20);
  s.stage_release_unused();
}

TEST_CASE("a staged write survives checkpoint and reopen", "[backend][staged]") {
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  std::string bytes = pattern_bytes(2 << 20, 43);
  uint64_t id = s.stage_write(bytes);
  s.apply(TxnBuilder().write_staged(kColl, "o", id, bytes.size()));
  s.checkpoint();
  s.reopen();
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
  // Ids handed out after reopen do not collide with the consumed one's data.
  uint64_t next = s.stage_write("other");
  s.apply(TxnBuilder().write_staged(kColl, "p", next, 5));
  CHECK(same_bytes(s.read_all(kColl, "p"), "other"));
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
}

TEST_CASE("a consumed stage can be bound again by replay after a reopen without checkpoint",
          "[backend][staged]") {
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  s.checkpoint();
  std::string bytes = pattern_bytes(1 << 20, 44);
  uint64_t id = s.stage_write(bytes);
  TxnBuilder bind =
      TxnBuilder().write_staged(kColl, "o", id, bytes.size()).setxattr(kColl, "o", "v", "1");
  uint64_t seq = s.apply(bind);
  s.close();
  s.reopen();
  // The host replays every journaled transaction after committed_seq.
  for (uint64_t replay = s.committed_seq() + 1; replay <= seq; ++replay) {
    REQUIRE(replay == seq);
    s.apply_at(bind, seq);
  }
  s.stage_release_unused();
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
  CHECK(s.getxattr(kColl, "o", "v") == "1");
}

TEST_CASE("releasing unused stages keeps consumed ones until a checkpoint covers them",
          "[backend][staged]") {
  // After a crash the host replays from committed_seq and calls
  // stage_release_unused; the transaction binding `used` is after the
  // checkpoint, so a later crash replays it again and needs the stage.
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  s.checkpoint();
  std::string used = pattern_bytes(200000, 47);
  uint64_t used_id = s.stage_write(used);
  s.stage_write(pattern_bytes(1000, 48));  // never referenced
  TxnBuilder bind = TxnBuilder().write_staged(kColl, "o", used_id, used.size());
  uint64_t seq = s.apply(bind);
  s.stage_release_unused();
  s.close();
  s.reopen();
  for (uint64_t replay = s.committed_seq() + 1; replay <= seq; ++replay) s.apply_at(bind, seq);
  CHECK(same_bytes(s.read_all(kColl, "o"), used));
}

TEST_CASE("releasing unused stages keeps the data of consumed ones", "[backend][staged]") {
  FreshStore s;
  if (!staged_writes_apply(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  std::string used = pattern_bytes(300000, 45);
  uint64_t used_id = s.stage_write(used);
  s.stage_write(pattern_bytes(300000, 46));  // never referenced by a transaction
  s.apply(TxnBuilder().write_staged(kColl, "o", used_id, used.size()));
  s.stage_release_unused();
  CHECK(same_bytes(s.read_all(kColl, "o"), used));
  s.checkpoint();
  s.reopen();
  CHECK(same_bytes(s.read_all(kColl, "o"), used));
}

TEST_CASE("a released stage is gone and others stay bindable", "[backend][staged]") {
  // ABI 1.2: the host abandoned a stage (a failed guard, a resent op
  // answered from its log) and drops it at once rather than at next open.
  FreshStore s;
  if (!stage_release_applies(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  std::string kept = pattern_bytes(200000, 51);
  uint64_t dropped_id = s.stage_write(pattern_bytes(200000, 50));
  uint64_t kept_id = s.stage_write(kept);
  CHECK(s.stage_release(dropped_id) == 0);
  s.apply(TxnBuilder().write_staged(kColl, "o", kept_id, kept.size()));
  CHECK(same_bytes(s.read_all(kColl, "o"), kept));
  s.checkpoint();
  s.reopen();
  CHECK(same_bytes(s.read_all(kColl, "o"), kept));
}

TEST_CASE("a consumed stage cannot be released", "[backend][staged]") {
  FreshStore s;
  if (!stage_release_applies(s)) return;
  s.apply(TxnBuilder().mkcoll(kColl));
  std::string bytes = pattern_bytes(150000, 52);
  uint64_t id = s.stage_write(bytes);
  s.checkpoint();
  TxnBuilder bind = TxnBuilder().write_staged(kColl, "o", id, bytes.size());
  uint64_t seq = s.apply(bind);
  CHECK(s.stage_release(id) < 0);
  // Replay after a crash without checkpoint still finds it.
  s.close();
  s.reopen();
  if (s.committed_seq() < seq) s.apply_at(bind, seq);
  CHECK(same_bytes(s.read_all(kColl, "o"), bytes));
}

}  // namespace
