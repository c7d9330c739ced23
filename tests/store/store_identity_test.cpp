// A store and its journal belong together: a copied store uses its own copy
// of the journal and never eats the original's, a journal of another store
// is refused, a journal that lost records the backend never applied is
// refused, mkfs is atomic, a damaged record the checkpoint covers is
// harmless, and `fsck --repair --discard-after` gets past a real corruption
// saying what it dropped.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "store_compare.h"
#include "store_test_util.h"
#include "test_env.h"
#include "txn_gen.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using store::Store;

bool contains(const std::string &hay, const std::string &needle) {
  return hay.find(needle) != std::string::npos;
}

StoreState model_state(uint64_t to) {
  Model m;
  Status st = TxnGenerator(writer_gen_config(0, 0)).advance(m, 1, to);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return m.state();
}

void require_same(Store &s, const StoreState &expected) {
  std::string diff = diff_store(s, expected);
  INFO("store vs model: " << diff);
  REQUIRE(diff.empty());
}

void require_closed(std::unique_ptr<Store> &s) {
  Status st = s->close();
  INFO("close: " << st.ToString());
  REQUIRE(st.ok());
  s.reset();
}

void shell(const std::string &cmd) {
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// What an operator does: `cp -a` of a whole (stopped or crashed) store.
void copy_store(const std::string &from, const std::string &to) {
  shell("cp -a '" + from + "' '" + to + "'");
}

// Puts the backend of store `from` into store `to` (as if `to`'s backend
// had been restored from a copy). kv only: its backend is plain files.
void transplant_backend(const std::string &from, const std::string &to) {
  fs::remove_all(to + "/backend");
  shell("cp -a '" + from + "/backend' '" + to + "/backend'");
}

// Writes txn 1..to in a child that stops without closing: every record
// stays in the journal, nothing is checkpointed.
void crash_after_writing(const ScratchStore &ss, uint64_t from, uint64_t to) {
  WriterRun w;
  w.dir = ss.dir();
  w.from = from;
  w.to = to;
  w.large_pct = 0;
  w.clone_pct = 0;
  run_writer(w);
}

void open_and_close(const ScratchStore &ss) {
  auto s = ss.must_open();
  require_closed(s);
}

// Damages the payload of the transaction record of seq `seq` (1-based; the
// journal holds seqs 1..n in order).
void damage_record(const std::string &journal, uint64_t seq, size_t expect_records) {
  const std::string bytes = read_file(journal);
  std::vector<uint64_t> recs = find_txn_records(bytes);
  INFO("journal " << journal << ": " << recs.size() << " transaction records found");
  REQUIRE(recs.size() == expect_records);
  const uint64_t at = recs[seq - 1] + 24;
  std::string garbage(32, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(bytes[at + i] ^ 0x5a);
  write_file_at(journal, at, garbage);
}

}  // namespace

TEST_CASE("fsck of a cp -a copy of a crashed store loses none of the original's transactions",
          "[store][journal]") {
  if (pair().backend == "btrfs") {
    WARN("a btrfs backend is subvolumes, which cp -a does not copy (btrfs send/receive does)");
    return;
  }
  ScratchStore ss("copy-orig");
  crash_after_writing(ss, 1, 60);
  const std::string copy = unique_dir("copy-of");
  copy_store(ss.dir(), copy);
  struct Cleanup {
    std::string dir;
    ~Cleanup() { destroy_store(dir); }
  } cleanup{copy};

  // fsck of the copy: it replays what it needs.
  {
    CapturedLog log;
    auto c = Store::open(registry(), copy, test_settings(), log.logger());
    INFO("open of the copy: " << c.status().ToString() << "\n" << log.text());
    REQUIRE(c.ok());
    require_same(**c, model_state(60));
    auto problems = (*c)->fsck();
    REQUIRE(problems.ok());
    CHECK(*problems == 0);
    require_closed(*c);
  }
  // fsck of the original: every acknowledged transaction, or a clear
  // refusal; never an open that silently lacks them.
  auto s = ss.open();
  const bool own_journal = ss.meta().journal_location(ss.dir()).rfind(ss.dir() + "/", 0) == 0;
  if (!s.ok()) {
    const std::string msg = s.status().ToString();
    std::printf("%s: the original refused its journal after the copy used it: %s\n",
                pair().name.c_str(), msg.c_str());
    INFO(msg);
    CHECK_FALSE(own_journal);  // with its journal inside, the copy had its own
    CHECK(contains(msg, "were trimmed without being applied here"));
    return;
  }
  INFO("replay of the original: " << (*s)->replay_report().records << " records from checkpoint "
                                  << (*s)->replay_report().committed_seq);
  require_same(**s, model_state(60));
  require_closed(*s);
}

TEST_CASE("mkfs makes the journal path relative to the store directory", "[store][journal]") {
  ScratchStore ss("relative");
  const store::StoreMeta m = ss.meta();
  if (pair().journal == "tmpfs") {
    CHECK(m.journal_path.rfind("/dev/shm/", 0) == 0);  // tmpfs lives outside
  } else {
    CHECK(m.journal_path == "journal");
    CHECK(fs::exists(ss.dir() + "/journal"));
  }
  // An absolute path into the new store's own directory is its own journal.
  const std::string dir = unique_dir("absolute-inside");
  store::MkfsParams p;
  p.dir = dir;
  p.backend = pair().backend;
  p.journal = pair().journal;
  if (p.backend == "kv") p.backend_options.emplace_back("kv_engine", pair().kv_engine);
  p.journal_size = 4ull << 20;
  p.journal_path = fs::absolute(dir).string() + "/wal";
  Status st = Store::mkfs(registry(), p, test_logger());
  INFO("mkfs with journal_path " << p.journal_path << ": " << st.ToString());
  REQUIRE(st.ok());
  auto made = store::StoreMeta::load(dir);
  REQUIRE(made.ok());
  CHECK(made->journal_path == "wal");
  CHECK(fs::exists(dir + "/wal"));
  destroy_store(dir);
}

TEST_CASE("a store refuses the journal of another store and names both stores",
          "[store][journal]") {
  ScratchStore a("owner-a"), b("owner-b");
  crash_after_writing(a, 1, 20);
  const store::StoreMeta b_meta = b.meta();
  store::StoreMeta pointed = b_meta;
  pointed.journal_path = a.meta().journal_location(a.dir());  // b now names a's journal
  REQUIRE(pointed.save(b.dir()).ok());

  auto s = b.open();
  // Put b back first, so that its cleanup does not remove a's journal.
  REQUIRE(b_meta.save(b.dir()).ok());
  REQUIRE_FALSE(s.ok());
  const std::string msg = s.status().ToString();
  std::printf("%s: foreign journal refused: %s\n", pair().name.c_str(), msg.c_str());
  INFO(msg);
  CHECK(s.status().code() == -EXDEV);
  CHECK(contains(msg, a.meta().fsid));
  CHECK(contains(msg, b_meta.fsid));
  CHECK(contains(msg, a.dir()));
  CHECK(contains(msg, b.dir()));
  // a's journal is untouched: a still replays everything.
  auto sa = a.must_open();
  require_same(*sa, model_state(20));
  require_closed(sa);
}

TEST_CASE("a journal whose oldest record is past the checkpoint + 1 is refused and left as it is",
          "[store][journal]") {
  if (pair().backend != "kv") {
    WARN("needs a backend that is plain files to restore an old copy of it (kv)");
    return;
  }
  ScratchStore ss("gap");
  crash_after_writing(ss, 1, 20);
  open_and_close(ss);  // checkpoint 20
  const std::string old_backend = unique_dir("gap-old");
  fs::create_directories(old_backend);
  shell("cp -a '" + ss.dir() + "/backend' '" + old_backend + "/backend'");
  {
    // Written here and closed: the close checkpoints 40 and trims the
    // journal up to it (a backend that is exact by itself, kv-leveldb, may
    // have nothing to checkpoint after a crash, which trims nothing).
    auto s = ss.must_open();
    const TxnGenerator gen(writer_gen_config(0, 0));
    for (uint64_t k = 21; k <= 40; ++k) REQUIRE(s->submit(gen.txn(k)).ok());
    require_closed(s);
  }
  crash_after_writing(ss, 41, 60);            // the journal holds 41..60
  transplant_backend(old_backend, ss.dir());  // a backend at checkpoint 20
  fs::remove_all(old_backend);

  const std::string journal = ss.meta().journal_location(ss.dir());
  const std::string before = read_file(journal);
  auto s = ss.open();
  if (s.ok())
    FAIL_CHECK("open succeeded: checkpoint " << (*s)->replay_report().committed_seq << ", "
                                             << (*s)->replay_report().records
                                             << " records replayed\nlog:\n"
                                             << ss.log_text());
  REQUIRE_FALSE(s.ok());
  const std::string msg = s.status().ToString();
  std::printf("%s: journal with a gap refused: %s\n", pair().name.c_str(), msg.c_str());
  INFO(msg);
  CHECK(contains(msg, "seqs 21..40"));
  CHECK(contains(msg, "(20 acknowledged transactions)"));
  CHECK(read_file(journal) == before);  // nothing replayed, nothing trimmed
}

TEST_CASE("a failed mkfs leaves nothing behind and mkfs refuses a non-empty directory",
          "[store][journal]") {
  const std::string dir = unique_dir("mkfs-atomic");
  store::MkfsParams p;
  p.dir = dir;
  p.backend = pair().backend;
  p.journal = pair().journal;
  if (p.backend == "kv") p.backend_options.emplace_back("kv_engine", pair().kv_engine);
  p.journal_size = 1000;  // below two journal blocks: the journal's create fails
  Status st = Store::mkfs(registry(), p, test_logger());
  INFO("mkfs with a journal too small: " << st.ToString());
  REQUIRE_FALSE(st.ok());
  CHECK_FALSE(fs::exists(dir));
  for (const auto &e : fs::directory_iterator(fs::path(dir).parent_path()))
    CHECK_FALSE(contains(e.path().filename().string(), fs::path(dir).filename().string()));

  p.journal_size = 4ull << 20;  // the same directory is fine afterwards
  st = Store::mkfs(registry(), p, test_logger());
  INFO("second mkfs: " << st.ToString());
  REQUIRE(st.ok());
  destroy_store(dir);

  fs::create_directories(dir);
  std::ofstream(dir + "/precious") << "keep me";
  st = Store::mkfs(registry(), p, test_logger());
  INFO("mkfs in a non-empty directory: " << st.ToString());
  CHECK(st.code() == -ENOTEMPTY);
  CHECK(read_file(dir + "/precious") == "keep me");
  CHECK_FALSE(fs::exists(dir + "/" + store::StoreMeta::kFileName));
  p.force = true;
  st = Store::mkfs(registry(), p, test_logger());
  INFO("mkfs --force: " << st.ToString());
  CHECK(st.ok());
  CHECK_FALSE(fs::exists(dir + "/precious"));
  destroy_store(dir);
}

TEST_CASE("a damaged journal record the checkpoint already covers does not block open",
          "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 4ull << 20;
  ScratchStore ss("covered", o);
  if (pair().backend != "kv" || ss.meta().journal_path[0] == '/') {
    WARN(
        "needs a backend that is plain files (kv) and a journal inside the store directory, "
        "so that a copy of the store has its own");
    return;
  }
  crash_after_writing(ss, 1, 60);  // the journal holds 1..60
  // A copy replays and checkpoints 1..60; its backend then covers the
  // original's whole journal.
  const std::string copy = unique_dir("covered-copy");
  copy_store(ss.dir(), copy);
  {
    auto c = Store::open(registry(), copy, test_settings(), test_logger());
    REQUIRE(c.ok());
    require_closed(*c);
  }
  transplant_backend(copy, ss.dir());
  destroy_store(copy);
  damage_record(ss.meta().journal_location(ss.dir()), 30, 60);

  auto s = ss.open();
  INFO("open: " << s.status().ToString() << "\nlog:\n" << ss.log_text());
  REQUIRE(s.ok());
  const store::ReplayReport &rr = (*s)->replay_report();
  INFO("replay detail: " << rr.detail);
  CHECK(rr.committed_seq == 60);
  CHECK(contains(rr.detail, "skipped a damaged record"));
  require_same(**s, model_state(60));
  require_closed(*s);
}

TEST_CASE("repair with discard-after drops what it reports, keeps a copy, and the store opens",
          "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 4ull << 20;
  ScratchStore ss("repair", o);
  crash_after_writing(ss, 1, 60);
  const std::string journal = ss.meta().journal_location(ss.dir());
  damage_record(journal, 30, 60);
  const std::string damaged = read_file(journal);

  auto plain = ss.open();
  if (plain.ok()) {
    // The backend already holds seq 30 (it checkpointed by itself).
    REQUIRE((*plain)->replay_report().committed_seq >= 30);
    WARN(pair().name << ": the backend checkpointed past the damage; nothing to repair");
    require_closed(*plain);
    return;
  }
  // Past the damage nothing can be kept: refused, nothing changed.
  auto too_far =
      Store::open_discarding_after(registry(), ss.dir(), test_settings(), 40, test_logger());
  REQUIRE_FALSE(too_far.ok());
  INFO(too_far.status().ToString());
  CHECK(contains(too_far.status().message(), "only up to seq 29"));
  CHECK(read_file(journal) == damaged);

  auto s = Store::open_discarding_after(registry(), ss.dir(), test_settings(), 29, test_logger());
  INFO("repair: " << s.status().ToString());
  REQUIRE(s.ok());
  const store::RepairReport &r = (*s)->replay_report().repair;
  CHECK(r.requested);
  CHECK(r.lost == 31);
  CHECK(r.first_lost == 30);
  CHECK(r.last_lost == 60);
  REQUIRE_FALSE(r.saved_copy.empty());
  CHECK(fs::path(r.saved_copy).parent_path() == fs::path(ss.dir()));
  CHECK(read_file(r.saved_copy) == damaged);
  require_same(**s, model_state(29));
  require_closed(*s);

  // From now on the store opens as any other and goes on writing.
  auto again = ss.must_open();
  CHECK(again->replay_report().committed_seq == 29);
  require_same(*again, model_state(29));
  require_closed(again);
  crash_after_writing(ss, 30, 40);
  again = ss.must_open();
  require_same(*again, model_state(40));
  require_closed(again);
}

}  // namespace strata::testing
