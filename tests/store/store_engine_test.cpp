// The store engine (core/store/store.h) over one backend x journal pair,
// chosen by --pair (ctest registers every test once per available pair).
// Tests tagged [journal] need a journal and are not registered for
// journal-less pairs.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "store_compare.h"
#include "store_test_util.h"
#include "test_env.h"
#include "txn_gen.h"

namespace strata::testing {
namespace {

using Clock = std::chrono::steady_clock;
using store::Store;
using store::Transaction;

bool contains(const std::string &hay, const std::string &needle) {
  return hay.find(needle) != std::string::npos;
}

// Applies txn(from..to) to the store, queue depth `depth`, and waits.
void write_generated(Store &s, const TxnGenerator &gen, uint64_t from, uint64_t to,
                     int depth = 16) {
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  std::vector<std::string> errors;
  for (uint64_t k = from; k <= to; ++k) {
    {
      std::unique_lock lk(mu);
      cv.wait(lk, [&] { return in_flight < depth; });
      ++in_flight;
    }
    Status st = s.queue(gen.txn(k), [&, k](const Status &r) {
      std::lock_guard lk(mu);
      if (!r.ok()) errors.push_back("txn " + std::to_string(k) + ": " + r.ToString());
      --in_flight;
      cv.notify_all();
    });
    INFO("queue of txn " << k << ": " << st.ToString());
    REQUIRE(st.ok());
  }
  std::unique_lock lk(mu);
  cv.wait(lk, [&] { return in_flight == 0; });
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
}

Model model_of(const TxnGenerator &gen, uint64_t to) {
  Model m;
  Status st = gen.advance(m, 1, to);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return m;
}

void require_same(Store &s, const StoreState &expected) {
  std::string diff = diff_store(s, expected);
  INFO("store vs model: " << diff);
  REQUIRE(diff.empty());
}

void require_fsck_clean(Store &s, const ScratchStore &ss) {
  auto n = s.fsck();
  INFO("fsck: " << n.status().ToString() << "\nlog:\n" << ss.log_text());
  REQUIRE(n.ok());
  REQUIRE(*n == 0);
}

// Closes and destroys the store (a closed Store still holds the directory
// lock until it is destroyed).
void require_closed(std::unique_ptr<Store> &s) {
  Status st = s->close();
  INFO("close: " << st.ToString());
  REQUIRE(st.ok());
  s.reset();
}

Status submit(Store &s, Transaction t) { return s.submit(std::move(t)); }

// --- callbacks -------------------------------------------------------------

TEST_CASE("a callback runs once the transaction is visible to reads", "[store]") {
  ScratchStore ss("visible");
  auto s = ss.must_open();
  REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.1"))).ok());

  constexpr int kN = 64;
  std::vector<std::promise<std::string>> seen(kN);
  std::vector<std::future<std::string>> futs;
  for (auto &p : seen) futs.push_back(p.get_future());
  for (int i = 0; i < kN; ++i) {
    std::string oid = "o" + std::to_string(i);
    Transaction t;
    t.write("pg.1", oid, 10, pattern_bytes(i, 1000 + i));
    t.setxattr("pg.1", oid, "x", std::to_string(i));
    Status st = s->queue(std::move(t), [&s, &seen, i, oid](const Status &r) {
      if (!r.ok()) {
        seen[i].set_value("error: " + r.ToString());
        return;
      }
      // Read inside the callback: the transaction must already be visible.
      auto d = s->read("pg.1", oid);
      auto x = s->getxattr("pg.1", oid, "x");
      seen[i].set_value(d.ok() && x.ok() ? *x + ":" + *d : "read failed");
    });
    REQUIRE(st.ok());
  }
  for (int i = 0; i < kN; ++i) {
    std::string got = futs[i].get();
    std::string want = std::to_string(i) + ":" + std::string(10, '\0') + pattern_bytes(i, 1000 + i);
    INFO("object " << i << " seen in its callback as " << printable(got));
    CHECK(got == want);
  }
  require_closed(s);
}

TEST_CASE("an early acknowledgement (Ack::kDurable) is visible to every later read", "[store]") {
  ScratchStore ss("early-ack");
  auto s = ss.must_open();
  REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.1"))).ok());

  // A reader thread takes each acknowledged object and reads it at once,
  // racing the apply that follows the acknowledgement.
  constexpr int kN = 200;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> acked;
  std::vector<std::string> errors;
  bool done = false;
  std::thread reader([&] {
    size_t next = 0;
    for (;;) {
      int i;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return next < acked.size() || done; });
        if (next == acked.size()) return;
        i = acked[next++];
      }
      std::string oid = "o" + std::to_string(i);
      auto d = s->read("pg.1", oid);
      auto x = s->getxattr("pg.1", oid, "x");
      auto o = s->omap_get("pg.1", oid, "k");
      bool good = d.ok() && *d == pattern_bytes(i, 3000 + i) && x.ok() && *x == std::to_string(i) &&
                  o.ok() && *o == "v" + std::to_string(i);
      if (!good) {
        std::lock_guard lk(mu);
        errors.push_back(oid + ": " + (d.ok() ? std::to_string(d->size()) + " bytes" : d.status().ToString()) +
                         ", xattr " + (x.ok() ? *x : x.status().ToString()));
      }
    }
  });
  for (int i = 0; i < kN; ++i) {
    std::string oid = "o" + std::to_string(i);
    Transaction t;
    t.write_full("pg.1", oid, pattern_bytes(i, 3000 + i));
    t.setxattr("pg.1", oid, "x", std::to_string(i));
    t.omap_set("pg.1", oid, "k", "v" + std::to_string(i));
    REQUIRE(s->queue(std::move(t),
                     [&, i](const Status &r) {
                       REQUIRE(r.ok());
                       std::lock_guard lk(mu);
                       acked.push_back(i);
                       cv.notify_all();
                     },
                     Store::Ack::kDurable)
                .ok());
  }
  s->drain();
  {
    std::lock_guard lk(mu);
    done = true;
    cv.notify_all();
  }
  reader.join();
  INFO((errors.empty() ? std::string() : errors.front()));
  CHECK(errors.empty());
  CHECK(acked.size() == kN);
  // Listing waits for the applies too.
  auto names = s->list_objects("pg.1");
  REQUIRE(names.ok());
  CHECK(names->size() == kN);
  require_closed(s);
}

TEST_CASE("many concurrent queue calls all complete", "[store]") {
  ScratchStore ss("concurrent");
  auto s = ss.must_open();
  REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.1").mkcoll("pg.2"))).ok());

  constexpr int kThreads = 8, kPerThread = 120;
  auto txn_of = [](int tid, int i) {
    Transaction t;
    std::string coll = tid % 2 ? "pg.1" : "pg.2";
    std::string oid = "t" + std::to_string(tid) + "." + std::to_string(i % 4);
    t.append(coll, oid, pattern_bytes(tid * 100000 + i, 100 + (i * 37) % 900));
    t.omap_set(coll, oid, "k" + std::to_string(i % 10), std::to_string(i));
    t.setxattr(coll, oid, "n", std::to_string(i));
    if (i % 17 == 16) t.truncate(coll, oid, 50);
    return t;
  };
  std::atomic<int> ok{0}, failed{0}, calls{0};
  std::vector<std::thread> threads;
  std::atomic<int> rejected{0};
  for (int tid = 0; tid < kThreads; ++tid)
    threads.emplace_back([&, tid] {
      for (int i = 0; i < kPerThread; ++i) {
        Status st = s->queue(txn_of(tid, i), [&](const Status &r) {
          ++calls;
          (r.ok() ? ok : failed)++;
        });
        if (!st.ok()) ++rejected;
      }
    });
  for (auto &t : threads) t.join();
  s->drain();
  CHECK(rejected == 0);
  CHECK(failed == 0);
  CHECK(calls == kThreads * kPerThread);
  CHECK(ok == kThreads * kPerThread);
  CHECK(s->stats().submitted_seq == 1 + kThreads * kPerThread);

  // Objects are per thread, so the per-thread orders define the result.
  Model m;
  REQUIRE(m.apply(std::move(Transaction().mkcoll("pg.1").mkcoll("pg.2"))).ok());
  for (int tid = 0; tid < kThreads; ++tid)
    for (int i = 0; i < kPerThread; ++i) REQUIRE(m.apply(txn_of(tid, i)).ok());
  require_same(*s, m.state());
  require_closed(s);
}

TEST_CASE("a concurrent reader never sees half of a transaction", "[store]") {
  // Each transaction rewrites the object whole, in several ops, with bytes
  // (and a size) that name the transaction; a reader must always find exactly
  // one transaction's object.
  ScratchStore ss("no-half-reads");
  auto s = ss.must_open();
  REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.1"))).ok());
  constexpr size_t kHalf = 24 * 1024;
  auto content = [](uint64_t k) {
    // The size differs from one transaction to the next, too.
    std::string d = pattern_bytes(k, 2 * kHalf - (k % 5) * 1000);
    std::memcpy(d.data(), &k, 8);
    std::memcpy(d.data() + kHalf, &k, 8);
    return d;
  };
  auto txn_of = [&](uint64_t k) {
    std::string d = content(k);
    Transaction t;
    t.truncate("pg.1", "obj", 0);
    t.write("pg.1", "obj", 0, d.substr(0, kHalf));
    t.write("pg.1", "obj", kHalf, d.substr(kHalf));
    t.setxattr("pg.1", "obj", "k", std::to_string(k));
    return t;
  };
  REQUIRE(submit(*s, txn_of(1)).ok());

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0}, torn{0}, errors{0};
  std::mutex mu;
  std::string first_torn;
  std::thread reader([&] {
    while (!stop) {
      auto d = s->read("pg.1", "obj");
      ++reads;
      if (!d.ok()) {
        ++errors;
        continue;
      }
      uint64_t k = 0;
      if (d->size() >= 8) std::memcpy(&k, d->data(), 8);
      if (*d != content(k)) {
        if (torn++ == 0) {
          std::lock_guard lk(mu);
          first_torn = "read of " + std::to_string(d->size()) + " bytes starting with txn " +
                       std::to_string(k) + "'s bytes is not that transaction's object";
        }
      }
    }
  });
  std::atomic<int> failed{0};
  const auto until = Clock::now() + std::chrono::milliseconds(1500);
  uint64_t k = 2;
  for (; Clock::now() < until; ++k) {
    REQUIRE(s->queue(txn_of(k), [&](const Status &r) {
               if (!r.ok()) ++failed;
             }).ok());
    if (k % 8 == 0) s->drain();
  }
  s->drain();
  stop = true;
  reader.join();
  std::printf("%s: %llu concurrent reads over %llu transactions, %llu torn\n", pair().name.c_str(),
              static_cast<unsigned long long>(reads.load()), static_cast<unsigned long long>(k - 1),
              static_cast<unsigned long long>(torn.load()));
  INFO(first_torn);
  CHECK(failed == 0);
  CHECK(errors == 0);
  CHECK(torn == 0);
  require_closed(s);
}

// --- append resolution -------------------------------------------------------

TEST_CASE("appends resolve in submission order across in-flight transactions", "[store]") {
  ScratchStore ss("append");
  auto s = ss.must_open();
  auto txn_of = [](int i) {
    Transaction t;
    if (i == 0) {
      t.mkcoll("pg.1");
      return t;
    }
    std::string data = pattern_bytes(i, 1 + (i * 131) % 3000);
    switch (i % 27) {
      case 25:  // plain writes: the store learns only the end they reach
        t.write("pg.1", "log", (i * 977) % 5000, data);
        t.append("pg.1", "log", data.substr(0, 3));
        break;
      case 26:
        t.write("pg.1", i % 2 ? "copy" : "fresh", (i * 389) % 4000, data);
        break;
      case 20:
        t.truncate("pg.1", "log", 1000);
        break;
      case 21:
        t.clone("pg.1", "log", "copy");
        t.append("pg.1", "copy", data);
        break;
      case 22:
        t.remove("pg.1", "copy");
        t.append("pg.1", "copy", data);
        break;
      case 23:
        t.write_full("pg.1", "log", data);
        break;
      case 24:
        t.zero("pg.1", "log", 10, 100);
        t.append("pg.1", "log", data);
        t.append("pg.1", "log", data.substr(0, 7));  // two appends in one txn
        break;
      default:
        t.append("pg.1", i % 3 ? "log" : "copy", data);
        break;
    }
    return t;
  };
  constexpr int kN = 300;
  std::atomic<int> failed{0};
  for (int i = 0; i < kN; ++i) {
    Status st = s->queue(txn_of(i), [&](const Status &r) {
      if (!r.ok()) ++failed;
    });
    REQUIRE(st.ok());
  }
  s->drain();
  CHECK(failed == 0);
  Model m;
  for (int i = 0; i < kN; ++i) REQUIRE(m.apply(txn_of(i)).ok());
  require_same(*s, m.state());

  // And across a reopen, where the sizes come from the backend.
  require_closed(s);
  s = ss.must_open();
  for (int i = kN; i < kN + 60; ++i) {
    REQUIRE(s->queue(txn_of(i), [&](const Status &r) {
               if (!r.ok()) ++failed;
             }).ok());
    REQUIRE(m.apply(txn_of(i)).ok());
  }
  s->drain();
  CHECK(failed == 0);
  require_same(*s, m.state());
  require_closed(s);
}

TEST_CASE("an append after plain writes to an untracked object starts at the object's real end",
          "[store]") {
  // A plain write to an object the store does not track records only the
  // end it reaches; an append must still land after the bytes the backend
  // holds, and after the furthest write, whichever is further.
  ScratchStore ss("write-append");
  {
    auto s = ss.must_open();
    REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.2").write("pg.2", "old", 0,
                                                                    std::string(1000, 'o'))))
                .ok());
    require_closed(s);
  }
  auto s = ss.must_open();  // the submit side knows no sizes yet
  std::atomic<int> failed{0};
  auto cb = [&](const Status &r) {
    if (!r.ok()) ++failed;
  };
  auto queue = [&](Transaction t) { REQUIRE(s->queue(std::move(t), cb).ok()); };
  queue(std::move(Transaction().write("pg.2", "old", 0, "ab")));     // inside: end stays 1000
  queue(std::move(Transaction().append("pg.2", "old", "X")));        // at 1000
  queue(std::move(Transaction().write("pg.2", "new", 100, "cd")));   // a new object: 102
  queue(std::move(Transaction().append("pg.2", "new", "Y")));        // at 102
  queue(std::move(Transaction().write("pg.2", "old", 2000, "ef")));  // past the end: 2002
  queue(std::move(Transaction().append("pg.2", "old", "Z")));        // at 2002
  s->drain();
  REQUIRE(failed == 0);
  auto old = s->read("pg.2", "old");
  REQUIRE(old.ok());
  REQUIRE(old->size() == 2003);
  CHECK(old->substr(0, 3) == "abo");
  CHECK(old->substr(999, 2) == "oX");
  CHECK(old->substr(1001, 999) == std::string(999, '\0'));
  CHECK(old->substr(2000) == "efZ");
  auto fresh = s->read("pg.2", "new");
  REQUIRE(fresh.ok());
  CHECK(*fresh == std::string(100, '\0') + "cdY");
  require_closed(s);
}

TEST_CASE("an append after an in-flight rmcoll and mkcoll starts from an empty object", "[store]") {
  // The old object's size must not leak into the re-created collection: the
  // append is resolved before the rmcoll is applied.
  ScratchStore ss("rmcoll-append");
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    {
      auto s = ss.must_open();
      Transaction t;
      t.mkcoll("pg.9").write("pg.9", "x", 0, std::string(100 + round, 'a'));
      REQUIRE(submit(*s, std::move(t)).ok());
      require_closed(s);
    }
    auto s = ss.must_open();  // the submit side knows no sizes yet
    std::atomic<int> failed{0};
    auto cb = [&](const Status &r) {
      if (!r.ok()) ++failed;
    };
    REQUIRE(s->queue(std::move(Transaction().rmcoll("pg.9")), cb).ok());
    Transaction t;
    t.mkcoll("pg.9").append("pg.9", "x", "abc");
    REQUIRE(s->queue(std::move(t), cb).ok());
    s->drain();
    REQUIRE(failed == 0);
    auto d = s->read("pg.9", "x");
    REQUIRE(d.ok());
    INFO("pg.9/x after rmcoll, mkcoll, append \"abc\": " << printable(*d));
    CHECK(*d == "abc");
    REQUIRE(submit(*s, std::move(Transaction().rmcoll("pg.9"))).ok());
    require_closed(s);
  }
}

// --- validation --------------------------------------------------------------

TEST_CASE("ops into a missing collection are rejected before journaling", "[store]") {
  ScratchStore ss("missing-coll");
  auto s = ss.must_open();
  REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.1"))).ok());
  const uint64_t seq_before = s->stats().submitted_seq;
  const uint64_t records_before = s->stats().journal.records_written;
  bool called = false;
  auto cb = [&](const Status &) { called = true; };

  Transaction t1;
  t1.write("nope", "a", 0, "data");
  Status st = s->queue(std::move(t1), cb);
  INFO("write into a missing collection: " << st.ToString());
  CHECK(st.code() == -ENOENT);
  CHECK(contains(st.message(), "'nope'"));
  CHECK(contains(st.message(), "does not exist"));

  // A valid op before the bad one must not be applied either.
  Transaction t2;
  t2.write("pg.1", "a", 0, "data").omap_set("nope", "b", "k", "v");
  st = s->queue(std::move(t2), cb);
  INFO("mixed transaction: " << st.ToString());
  CHECK(st.code() == -ENOENT);

  // A collection removed earlier in the same transaction is missing too.
  Transaction t3;
  t3.mkcoll("pg.2").rmcoll("pg.2").touch("pg.2", "c");
  st = s->queue(std::move(t3), cb);
  INFO("op after rmcoll in the same transaction: " << st.ToString());
  CHECK(st.code() == -ENOENT);

  CHECK_FALSE(called);
  CHECK(s->stats().submitted_seq == seq_before);
  CHECK(s->stats().journal.records_written == records_before);
  CHECK(s->stat("pg.1", "a").status().code() == -ENOENT);
  auto colls = s->list_collections();
  REQUIRE(colls.ok());
  CHECK(*colls == std::vector<std::string>{"pg.1"});

  // Created earlier in the same transaction: accepted.
  Transaction t4;
  t4.mkcoll("pg.3").write("pg.3", "d", 0, "ok");
  CHECK(submit(*s, std::move(t4)).ok());
  CHECK(s->read("pg.3", "d").ok());

  // Nothing of the rejected transactions comes back after a restart.
  require_closed(s);
  s = ss.must_open();
  Model m;
  REQUIRE(m.apply(std::move(Transaction().mkcoll("pg.1"))).ok());
  REQUIRE(m.apply(std::move(Transaction().mkcoll("pg.3").write("pg.3", "d", 0, "ok"))).ok());
  require_same(*s, m.state());
  require_closed(s);
}

TEST_CASE("a second open of an open store is refused", "[store]") {
  ScratchStore ss("second-open");
  auto s = ss.must_open();
  auto again = ss.open();
  INFO("second open: " << again.status().ToString());
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == -EBUSY);
  CHECK(contains(again.status().message(), "in use"));
  require_closed(s);
}

TEST_CASE("a closed store can be opened again while its Store object still exists", "[store]") {
  // close() is documented as the end of the store's use; a caller that keeps
  // the object around (or closes and then runs journal_swap) must not find
  // the store "in use".
  ScratchStore ss("close-unlocks");
  auto s = ss.must_open();
  REQUIRE(s->close().ok());
  auto again = ss.open();
  INFO("open after close(), before the first Store is destroyed: " << again.status().ToString());
  CHECK(again.ok());
}

// --- restart -------------------------------------------------------------------

TEST_CASE("reopen after a clean close keeps everything and replays nothing", "[store]") {
  ScratchStore ss("clean-reopen");
  TxnGenerator gen;
  {
    auto s = ss.must_open();
    write_generated(*s, gen, 1, 150);
    require_closed(s);
  }
  auto s = ss.must_open();
  const store::ReplayReport &rr = s->replay_report();
  INFO("replay: " << rr.records << " records after checkpoint " << rr.committed_seq << ", last "
                  << rr.last_seq << " " << rr.detail);
  CHECK(rr.records == 0);
  CHECK(rr.torn_bytes == 0);
  CHECK(rr.committed_seq == 150);
  CHECK(rr.last_seq == 150);
  require_same(*s, model_of(gen, 150).state());
  require_fsck_clean(*s, ss);

  // Sequence numbers continue where they were.
  write_generated(*s, gen, 151, 160);
  CHECK(s->stats().submitted_seq == 160);
  require_closed(s);
}

TEST_CASE("reopen after an unclean stop replays and keeps every acknowledged transaction",
          "[store]") {
  ScratchStore ss("unclean-reopen");
  WriterRun w;
  w.dir = ss.dir();
  w.to = 120;
  w.large_pct = 10;
  w.tail_bytes = 3000;  // txn 121: no clone, so not checkpointed by any backend
  run_writer(w);

  auto s = ss.must_open();
  const store::ReplayReport &rr = s->replay_report();
  INFO("replay: " << rr.records << " records after checkpoint " << rr.committed_seq << ", last "
                  << rr.last_seq << " " << rr.detail);
  CHECK(rr.last_seq == 121);
  const uint64_t caps = s->backend_caps();
  // Only a backend that keeps an exact prefix by itself may skip the journal.
  const bool must_replay = pair().has_journal() && (!(caps & STRATA_OS_CAP_EXACT_REPLAY) ||
                                                    (caps & STRATA_OS_CAP_ROLLBACK_CHECKPOINT));
  if (must_replay) CHECK(rr.records > 0);
  std::printf("%s: unclean stop after 121 txns: replayed %llu records from checkpoint %llu\n",
              pair().name.c_str(), static_cast<unsigned long long>(rr.records),
              static_cast<unsigned long long>(rr.committed_seq));
  Model m = model_of(TxnGenerator(writer_gen_config(10)), 120);
  REQUIRE(m.apply(tail_txn(3000)).ok());
  require_same(*s, m.state());
  require_fsck_clean(*s, ss);
  require_closed(s);

  // A second reopen has nothing left to replay.
  s = ss.must_open();
  CHECK(s->replay_report().records == 0);
  require_same(*s, m.state());
  require_closed(s);
}

TEST_CASE("large full-object writes are staged and survive an unclean stop", "[store]") {
  {
    ScratchStore ss("staged");
    auto s = ss.must_open();
    Transaction t;
    t.mkcoll("pg.1").write_full("pg.1", "big", pattern_bytes(1, 300 * 1024));
    REQUIRE(submit(*s, std::move(t)).ok());
    const bool staged = s->backend_caps() & STRATA_OS_CAP_STAGED_WRITES;
    // The file system under the store is shared with the tests running
    // beside this one: while one of them has it near its reserve, a write
    // is rightly journaled instead of staged (btrfs frees space late). So
    // a few more tries, a moment apart; staging that never happens fails.
    for (int i = 0; staged && s->stats().staged_writes == 0 && i < 20; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      Transaction again;
      again.write_full("pg.1", "big" + std::to_string(i), pattern_bytes(1, 300 * 1024));
      REQUIRE(submit(*s, std::move(again)).ok());
    }
    CHECK((s->stats().staged_writes > 0) == staged);
    auto d = s->read("pg.1", "big");
    REQUIRE(d.ok());
    CHECK(*d == pattern_bytes(1, 300 * 1024));
    require_closed(s);
  }
  ScratchStore ss("staged-unclean");
  WriterRun w;
  w.dir = ss.dir();
  w.to = 60;
  w.large_pct = 60;
  run_writer(w);
  auto s = ss.must_open();
  require_same(*s, model_of(TxnGenerator(writer_gen_config(60)), 60).state());
  require_fsck_clean(*s, ss);
  require_closed(s);
}

TEST_CASE("a store inside its reserve refuses stages with ENOSPC and journals large writes instead",
          "[store]") {
  ScratchStore ss("reserve");
  store::StoreSettings st;
  st.reserve_pct = 100;  // the whole filesystem is reserve: no stage fits
  auto s = ss.must_open(st);
  auto space = s->space();
  REQUIRE(space.ok());
  CHECK(space->total_bytes > 0);
  if (s->backend_caps() & STRATA_OS_CAP_STAGED_WRITES) {
    auto staged = s->stage(pattern_bytes(2, 300 * 1024));
    REQUIRE_FALSE(staged.ok());
    CHECK(staged.status().code() == -ENOSPC);
    CHECK(staged.status().message().find("reserve") != std::string::npos);
  }
  // A write the store must take (a replica's copy) still goes through: the
  // journal carries its bytes, the store does not fail.
  Transaction t;
  t.mkcoll("pg.1").write_full("pg.1", "big", pattern_bytes(3, 300 * 1024));
  REQUIRE(submit(*s, std::move(t)).ok());
  CHECK(s->stats().staged_writes == 0);
  auto d = s->read("pg.1", "big");
  REQUIRE(d.ok());
  CHECK(*d == pattern_bytes(3, 300 * 1024));
  CHECK(s->health_warnings().size() == (pair().journal == "tmpfs" ? 1u : 0u));
  require_closed(s);
}

// --- journal corruption --------------------------------------------------------

TEST_CASE("a corrupted journal record before the tail makes open fail with a clear message",
          "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 4ull << 20;
  ScratchStore ss("corrupt", o);
  WriterRun w;
  w.dir = ss.dir();
  w.to = 60;
  w.large_pct = 0;
  w.clone_pct = 0;  // no checkpoint: every record stays in the journal
  run_writer(w);

  const std::string jpath = ss.meta().journal_location(ss.dir());
  const std::string bytes = read_file(jpath);
  std::vector<uint64_t> recs = find_txn_records(bytes);
  INFO("journal " << jpath << ": " << recs.size() << " transaction records found");
  REQUIRE(recs.size() == 60);
  const uint64_t bad_seq = 30;
  const uint64_t at = recs[bad_seq - 1] + 24;
  std::string garbage(32, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(bytes[at + i] ^ 0x5a);
  write_file_at(jpath, at, garbage);

  for (int attempt = 0; attempt < 2; ++attempt) {
    INFO("open attempt " << attempt + 1);
    auto s = ss.open();
    if (s.ok()) {
      // Only acceptable if the backend already held the damaged record, so
      // nothing acknowledged was lost.
      const store::ReplayReport &rr = (*s)->replay_report();
      INFO("open succeeded: replay from checkpoint " << rr.committed_seq << ", " << rr.records
                                                     << " records " << rr.detail);
      REQUIRE(rr.committed_seq >= bad_seq);
      require_same(**s, model_of(TxnGenerator(writer_gen_config(0, 0)), 60).state());
      WARN(pair().name << ": corruption at seq " << bad_seq << " ignored: the backend had "
                       << "checkpointed up to " << rr.committed_seq);
      require_closed(*s);
      return;
    }
    const Status &st = s.status();
    std::printf("%s: open with a corrupted record refused: %s\n", pair().name.c_str(),
                st.ToString().c_str());
    INFO("open: " << st.ToString());
    CHECK(contains(st.message(), jpath));
    CHECK(contains(st.message(), "refusing to start"));
  }
}

TEST_CASE("a torn journal tail is discarded and reported and writing goes on", "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 4ull << 20;
  ScratchStore ss("torn", o);
  WriterRun w;
  w.dir = ss.dir();
  w.to = 40;
  w.large_pct = 0;
  w.clone_pct = 0;       // no checkpoint: every record stays in the journal
  w.tail_bytes = 20000;  // txn 41: the record we tear
  run_writer(w);

  const std::string jpath = ss.meta().journal_location(ss.dir());
  const std::string bytes = read_file(jpath);
  std::vector<uint64_t> recs = find_txn_records(bytes);
  INFO("journal " << jpath << ": " << recs.size() << " transaction records found");
  REQUIRE(recs.size() == 41);
  // Garble the middle of the last record's payload, as a torn write would.
  const uint64_t at = recs.back() + 10000;
  write_file_at(jpath, at, std::string(512, '\x77'));

  auto s = ss.must_open();
  const store::ReplayReport &rr = s->replay_report();
  INFO("replay: committed " << rr.committed_seq << ", " << rr.records << " records, last "
                            << rr.last_seq << ", torn " << rr.torn_bytes << " bytes: " << rr.detail
                            << "\nlog:\n"
                            << ss.log_text());
  std::printf("%s: torn tail: %llu bytes discarded (%s)\n", pair().name.c_str(),
              static_cast<unsigned long long>(rr.torn_bytes), rr.detail.c_str());
  if (rr.committed_seq < 41) {
    CHECK(rr.torn_bytes > 0);
    CHECK_FALSE(rr.detail.empty());
    CHECK(rr.last_seq == 40);
    CHECK(contains(ss.log_text(), "journal tail"));
  }
  // Everything before the torn record is there. The torn transaction itself
  // (an omap key on the counter) may have reached the backend before the
  // stop (it had been acknowledged before we tore its record): ignored.
  auto actual = read_store(*s);
  REQUIRE(actual.ok());
  actual->collections[kCounterCollection][kCounterObject].omap.erase(kTailKey);
  TxnGenerator gen(writer_gen_config(0, 0));
  Model m = model_of(gen, 40);
  std::string diff = first_difference(m.state(), *actual);
  INFO("store vs model(1..40): " << diff);
  REQUIRE(diff.empty());

  // The journal goes on after the discarded tail, across another crash.
  REQUIRE(submit(*s, std::move(Transaction().omap_rm(kCounterCollection, kCounterObject, kTailKey)))
              .ok());
  require_closed(s);
  w.from = 41;
  w.to = 80;
  w.tail_bytes = 0;
  run_writer(w);
  s = ss.must_open();
  REQUIRE(gen.advance(m, 41, 80).ok());
  require_same(*s, m.state());
  require_fsck_clean(*s, ss);
  require_closed(s);
}

// --- journal swap ----------------------------------------------------------------

TEST_CASE("journal swap to other media and back loses nothing", "[store]") {
  ScratchStore ss("swap");
  const std::string first = pair().journal;
  const std::string other = first == "file" ? "tmpfs" : "file";
  TxnGenerator gen(writer_gen_config(3));
  Model m;
  auto swap_to = [&](const std::string &journal) {
    const std::string old_path = ss.meta().journal_location(ss.dir());
    Status st =
        Store::journal_swap(registry(), ss.dir(), journal, "", 8ull << 20, {}, test_logger());
    INFO("journal swap to " << journal << ": " << st.ToString());
    REQUIRE(st.ok());
    store::StoreMeta meta = ss.meta();
    CHECK(meta.journal == journal);
    if (!old_path.empty() && old_path != meta.journal_location(ss.dir()))
      CHECK_FALSE(std::filesystem::exists(old_path));
  };

  // Phase 1: written on the first journal, left unclean (the swap replays it).
  WriterRun w;
  w.dir = ss.dir();
  w.to = 50;
  run_writer(w);
  REQUIRE(gen.advance(m, 1, 50).ok());
  swap_to(other);

  // Phase 2: on the other journal, in process, closed cleanly.
  {
    auto s = ss.must_open();
    require_same(*s, m.state());
    write_generated(*s, gen, 51, 100);
    REQUIRE(gen.advance(m, 51, 100).ok());
    require_closed(s);
  }
  // Phase 3: unclean again on the other journal, then back.
  w.from = 101;
  w.to = 150;
  run_writer(w);
  REQUIRE(gen.advance(m, 101, 150).ok());
  swap_to(first);

  // Phase 4: back on the first journal.
  w.from = 151;
  w.to = 200;
  run_writer(w);
  REQUIRE(gen.advance(m, 151, 200).ok());
  auto s = ss.must_open();
  require_same(*s, m.state());
  require_fsck_clean(*s, ss);
  CHECK(s->stats().submitted_seq == 200);
  require_closed(s);
}

// --- health ------------------------------------------------------------------------

TEST_CASE("a volatile journal is named in the health warnings and the log", "[store]") {
  ScratchStore ss("health");
  CapturedLog log;
  auto s = ss.must_open(test_settings(), &log.logger());
  const bool is_volatile = s->journal_caps() & STRATA_JOURNAL_CAP_VOLATILE;
  CHECK(is_volatile == (pair().journal == "tmpfs"));
  std::vector<std::string> w = s->health_warnings();
  std::string all;
  for (const std::string &x : w) all += x + "\n";
  INFO("health warnings:\n" << all << "log:\n" << log.text());
  if (is_volatile) {
    REQUIRE(w.size() == 1);
    CHECK(contains(w[0], "volatile"));
    CHECK(contains(w[0], s->meta().journal_location(ss.dir())));
    CHECK(contains(log.text(), "volatile"));
  } else {
    CHECK(w.empty());
    CHECK_FALSE(contains(log.text(), "volatile"));
  }
  require_closed(s);
}

// --- a full journal and back-pressure ---------------------------------------------

// Writes `total` txns of `bytes` each from `threads` threads, each with at most
// `depth` in flight; objects are per thread. Returns the model.
struct LoadResult {
  Model model;
  int failed = 0;
  double max_fill_pct = 0;
  double max_queue_ms = 0;
};

LoadResult write_load(Store &s, int threads, int per_thread, size_t bytes, int depth) {
  LoadResult res;
  REQUIRE(submit(s, std::move(Transaction().mkcoll("pg.1"))).ok());
  REQUIRE(res.model.apply(std::move(Transaction().mkcoll("pg.1"))).ok());
  auto txn_of = [bytes](int tid, int i) {
    Transaction t;
    std::string oid = "w" + std::to_string(tid) + "." + std::to_string(i % 3);
    // A plain write is never staged: its bytes go through the journal.
    t.write("pg.1", oid, (i % 5) * 4096, pattern_bytes(tid * 1000003 + i, bytes));
    return t;
  };
  std::atomic<bool> done{false};
  std::atomic<int> failed{0};
  std::mutex mu;
  double max_fill = 0, max_queue = 0;
  std::thread monitor([&] {
    while (!done) {
      store::StoreStats st = s.stats();
      if (st.journal.capacity_bytes) {
        double fill = 100.0 * st.journal.used_bytes / st.journal.capacity_bytes;
        std::lock_guard lk(mu);
        max_fill = std::max(max_fill, fill);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  std::vector<std::thread> ts;
  for (int tid = 0; tid < threads; ++tid)
    ts.emplace_back([&, tid] {
      std::mutex tmu;
      std::condition_variable cv;
      int in_flight = 0;
      for (int i = 0; i < per_thread; ++i) {
        {
          std::unique_lock lk(tmu);
          cv.wait(lk, [&] { return in_flight < depth; });
          ++in_flight;
        }
        auto t0 = Clock::now();
        Status st = s.queue(txn_of(tid, i), [&](const Status &r) {
          if (!r.ok()) ++failed;
          std::lock_guard lk(tmu);
          --in_flight;
          cv.notify_all();
        });
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        {
          std::lock_guard lk(mu);
          max_queue = std::max(max_queue, ms);
        }
        if (!st.ok()) {
          ++failed;
          std::lock_guard lk(tmu);
          --in_flight;
        }
      }
      std::unique_lock lk(tmu);
      cv.wait(lk, [&] { return in_flight == 0; });
    });
  for (auto &t : ts) t.join();
  done = true;
  monitor.join();
  for (int tid = 0; tid < threads; ++tid)
    for (int i = 0; i < per_thread; ++i) REQUIRE(res.model.apply(txn_of(tid, i)).ok());
  res.failed = failed;
  res.max_fill_pct = max_fill;
  res.max_queue_ms = max_queue;
  return res;
}

TEST_CASE("a full journal blocks writers until checkpoints trim it", "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 1ull << 20;
  ScratchStore ss("full", o);
  store::StoreSettings st;
  st.checkpoint_interval_ms = 300;
  st.checkpoint_fill_pct = 100;  // only the timer checkpoints: the journal fills up
  st.throttle_fill_pct = 100;    // and nobody is slowed down before it is full
  auto s = ss.must_open(st);
  const auto t0 = Clock::now();
  // 4 threads x 40 x 32 KiB = 5 MiB through a 1 MiB journal.
  LoadResult r = write_load(*s, 4, 40, 32 * 1024, 8);
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  store::StoreStats stats = s->stats();
  std::printf(
      "%s: full journal: max fill %.0f%%, longest queue() %.0f ms, %llu checkpoints, "
      "%.2f s\n",
      pair().name.c_str(), r.max_fill_pct, r.max_queue_ms,
      static_cast<unsigned long long>(stats.checkpoints), secs);
  CHECK(r.failed == 0);
  // Writers were held up: a queue() waited for a timer checkpoint (every
  // 300 ms) to trim the journal. (The fill samples miss most full moments:
  // stats() waits behind the blocked writer.)
  CHECK(r.max_queue_ms >= 50);
  CHECK(stats.checkpoints >= 2);
  require_same(*s, r.model.state());
  require_closed(s);
}

// Waits up to `secs` for a queued transaction's callback. If it never comes
// the store is wedged (drain() and close() would hang too), so the test
// process removes the store and exits at once instead of hanging until
// ctest's timeout.
Status wait_or_die(std::future<Status> &f, const std::string &what, const ScratchStore &ss,
                   int secs = 10) {
  if (f.wait_for(std::chrono::seconds(secs)) == std::future_status::ready) return f.get();
  std::fprintf(stderr,
               "FATAL: %s: the callback never ran within %d s; the store is wedged (drain() "
               "and close() would hang). Exiting.\nlog:\n%s\n",
               what.c_str(), secs, ss.log_text().c_str());
  std::fflush(stderr);
  destroy_store(ss.dir());
  std::_Exit(1);
}

Status submit_or_die(Store &s, Transaction t, const std::string &what, const ScratchStore &ss) {
  auto p = std::make_shared<std::promise<Status>>();
  auto f = p->get_future();
  Status st = s.queue(std::move(t), [p](const Status &r) { p->set_value(r); });
  if (!st.ok()) return st;
  return wait_or_die(f, what, ss);
}

TEST_CASE("a transaction larger than the whole journal is refused and the store goes on",
          "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 1ull << 20;
  ScratchStore ss("oversize", o);
  auto s = ss.must_open();
  REQUIRE(submit(*s, std::move(Transaction().mkcoll("pg.1"))).ok());
  Transaction big;
  big.write("pg.1", "big", 0, pattern_bytes(9, 2 << 20));
  Status st = submit_or_die(*s, std::move(big), "2 MiB transaction into a 1 MiB journal", ss);
  INFO("2 MiB transaction into a 1 MiB journal: " << st.ToString());
  CHECK_FALSE(st.ok());
  // The store must still take transactions that fit.
  Status next = submit_or_die(*s, std::move(Transaction().write("pg.1", "small", 0, "fits")),
                              "the next transaction", ss);
  INFO("next transaction: " << next.ToString());
  CHECK(next.ok());
  CHECK(s->health_warnings().size() == (pair().journal == "tmpfs" ? 1u : 0u));
  CHECK(s->stat("pg.1", "big").status().code() == -ENOENT);
  s->close();
}

TEST_CASE("sustained writes into a small journal are throttled and never fail",
          "[store][journal]") {
  ScratchStore::Options o;
  o.journal_size = 2ull << 20;
  ScratchStore ss("throttle", o);
  store::StoreSettings st;
  st.checkpoint_interval_ms = 1000;
  st.throttle_fill_pct = 10;
  st.checkpoint_fill_pct = 50;
  auto s = ss.must_open(st);
  // 2 threads x 120 x 16 KiB = 3.75 MiB through a 2 MiB journal.
  LoadResult r = write_load(*s, 2, 120, 16 * 1024, 16);
  store::StoreStats stats = s->stats();
  std::printf(
      "%s: throttle: %llu sleeps, %.3f s asleep, drain rate %.1f MB/s, max fill %.0f%%, "
      "%llu checkpoints\n",
      pair().name.c_str(), static_cast<unsigned long long>(stats.throttle_sleeps),
      stats.throttle_seconds, stats.drain_bytes_per_sec / 1e6, r.max_fill_pct,
      static_cast<unsigned long long>(stats.checkpoints));
  CHECK(r.failed == 0);
  CHECK(stats.throttle_sleeps > 0);
  CHECK(s->health_warnings().size() == (pair().journal == "tmpfs" ? 1u : 0u));
  require_same(*s, r.model.state());
  require_closed(s);
}

}  // namespace
}  // namespace strata::testing
