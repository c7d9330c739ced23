// Replay: the host re-applies journaled transactions after a crash; the
// store must end up exactly where an uninterrupted run would have.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "store_harness.h"
#include "txn_script.h"
#include "txn_stream.h"

using namespace strata::test;

namespace {

std::string backend_under_test() { return GENERATE(as<std::string>{}, "xfs", "btrfs"); }

std::string plugin_file(const std::string &backend) {
  return backend == "xfs" ? STRATA_TEST_PLUGIN_XFS : STRATA_TEST_PLUGIN_BTRFS;
}

// Runs `script` against the (closed) store in a child process that dies
// without closing it.
void crash_after(TestStore &s, const ScriptWriter &script) {
  s.close();
  std::string path = s.dir() + ".script";
  script.save(path);
  std::string cmd = std::string(STRATA_TEST_CRASH_CHILD) + " '" + plugin_file(s.backend()) + "' '" +
                    s.dir() + "' '" + path + "'";
  int status = std::system(cmd.c_str());
  std::remove(path.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}

size_t count_objects(const std::string &dump) {
  size_t n = 0;
  for (size_t pos = dump.find("\n object "); pos != std::string::npos;
       pos = dump.find("\n object ", pos + 1))
    ++n;
  return n;
}

// Replays stream[from_seq..] as the host would after reading committed_seq.
void replay(TestStore &s, const std::vector<Txn> &stream) {
  uint64_t committed = s.committed_seq();
  for (const Txn &t : stream)
    if (t.seq() > committed) s.apply(t);
}

}  // namespace

TEST_CASE("re-applying any suffix of the transaction stream leaves the same state") {
  TestStore s(backend_under_test());
  std::vector<Txn> stream = random_stream(s, 1, 60, 7);
  for (const Txn &t : stream) s.apply(t);
  const std::string final_state = s.dump();

  for (size_t from : {60u, 51u, 30u, 12u, 2u, 1u}) {
    INFO("re-applying from seq " << from);
    for (size_t i = from - 1; i < stream.size(); ++i) s.apply(stream[i]);
    CHECK_SAME_STATE(s.dump(), final_state);
  }
  CHECK(s.fsck() == 0);
  s.checkpoint(60);
  s.reopen();
  CHECK_SAME_STATE(s.dump(), final_state);
}

TEST_CASE("after a crash the host's replay from the committed seq restores the state") {
  const std::string backend = backend_under_test();
  const size_t n = 50, m = 20;  // checkpoint after m, crash after n
  TestStore ref(backend);
  std::vector<Txn> ref_stream = random_stream(ref, 1, n, 11);
  for (size_t i = 0; i < m; ++i) ref.apply(ref_stream[i]);
  const std::string at_checkpoint = ref.dump();
  for (size_t i = m; i < n; ++i) ref.apply(ref_stream[i]);
  const std::string final_state = ref.dump();

  TestStore s(backend);
  std::vector<Txn> stream = random_stream(s, 1, n, 11);
  ScriptWriter script;
  for (size_t i = 0; i < m; ++i) script.apply(stream[i]);
  script.checkpoint(m);
  for (size_t i = m; i < n; ++i) script.apply(stream[i]);
  crash_after(s, script);

  s.open();
  CHECK(s.committed_seq() == m);
  if (backend == "btrfs") CHECK_SAME_STATE(s.dump(), at_checkpoint);  // rolled back exactly
  replay(s, stream);
  CHECK_SAME_STATE(s.dump(), final_state);
  CHECK(s.fsck() == 0);
  s.release_unused();
}

TEST_CASE("a crash in the middle of a transaction is repaired by its replay") {
  const std::string backend = backend_under_test();
  TestStore ref(backend);
  TestStore s(backend);
  for (TestStore *store : {&ref, &s}) {
    store->apply(
        Txn(1).mkcoll("c").write("c", "a", 0, pattern(100000, 1)).omap_set("c", "a", "k", "v"));
    store->checkpoint(1);
  }
  auto last = [](TestStore &store) {
    Txn t(2);
    t.write("c", "a", 4096, pattern(8192, 2))
        .truncate("c", "a", 50000)
        .remove("c", "a")
        .write("c", "a", 10, "reborn")
        .write_full("c", "b", pattern(30000, 3))
        .setxattr("c", "b", "x", "y")
        .write_staged("c", "b", store.stage(pattern(70000, 4)), 70000)
        .zero("c", "b", 100, 1000);
    return t;
  };
  Txn ref_last = last(ref);
  ref.apply(ref_last);
  const std::string final_state = ref.dump();

  Txn s_last = last(s);
  size_t cut = GENERATE(1u, 3u, 4u, 6u, 7u);
  INFO("crash after op " << cut);
  ScriptWriter script;
  script.apply(s_last.prefix(cut));  // ops 0..cut-1 ran, the batch never committed
  crash_after(s, script);
  s.open();
  CHECK(s.committed_seq() == 1);
  s.apply(s_last);
  CHECK_SAME_STATE(s.dump(), final_state);
  CHECK(s.fsck() == 0);
}

TEST_CASE("a clone transaction interrupted by a crash is never replayed over changed files") {
  // The snapshot pattern: clone the head, then overwrite the head, in one
  // transaction. Once applied it must not be applied again (the source
  // already holds the new bytes), and it is durable with its seq.
  const std::string backend = backend_under_test();
  TestStore s(backend);
  std::vector<Txn> stream;
  stream.emplace_back(1)
      .mkcoll("c")
      .write("c", "head", 0, pattern(200000, 1))
      .omap_set("c", "head", "k", "1");
  stream.emplace_back(2).write("c", "head", 1000, "second");
  stream.emplace_back(3)
      .clone("c", "head", "snap")
      .write("c", "head", 0, pattern(200000, 9))
      .omap_set("c", "head", "k", "2")
      .setxattr("c", "snap", "is", "snapshot");
  ScriptWriter script;
  script.apply(stream[0]);
  script.checkpoint(1);
  script.apply(stream[1]);
  script.apply(stream[2]);
  crash_after(s, script);

  s.open();
  if (backend == "xfs") CHECK(s.committed_seq() == 3);  // the clone txn made itself durable
  replay(s, stream);
  std::string expected_snap = pattern(200000, 1);
  expected_snap.replace(1000, 6, "second");
  CHECK(s.read("c", "snap") == expected_snap);
  CHECK(s.read("c", "head") == pattern(200000, 9));
  CHECK(s.omap_get("c", "snap", "k") == "1");
  CHECK(s.omap_get("c", "head", "k") == "2");
  CHECK(s.getxattr("c", "snap", "is") == "snapshot");
  CHECK(s.fsck() == 0);
}

TEST_CASE("reopening a btrfs store without a checkpoint loses exactly the later transactions") {
  TestStore s("btrfs");
  std::vector<Txn> stream = random_stream(s, 1, 30, 5);
  for (size_t i = 0; i < 20; ++i) s.apply(stream[i]);
  s.checkpoint(20);
  const std::string at_checkpoint = s.dump();
  for (size_t i = 20; i < 30; ++i) s.apply(stream[i]);
  const std::string final_state = s.dump();
  REQUIRE(final_state != at_checkpoint);

  s.reopen();  // a clean close without checkpoint rolls back like a crash
  CHECK(s.committed_seq() == 20);
  CHECK_SAME_STATE(s.dump(), at_checkpoint);
  CHECK(s.usage().n_objects == count_objects(at_checkpoint));
  replay(s, stream);
  CHECK_SAME_STATE(s.dump(), final_state);
}
