// The kill -9 crash test, run once per backend x journal pair.
//
// A writer child process (this binary, re-executed in the "crash-writer"
// mode) opens the store (replaying its journal), reads the counter object's
// "last" xattr m and streams the generated transactions txn(m+1), txn(m+2),
// ... at queue depth 8, reporting every acknowledged k to the parent from the
// store's callback. The parent SIGKILLs it after a random, seeded 10-300 ms.
// In about one round in four the parent first kills one or two writers at a
// random 5-150 ms after their spawn, which often lands in the middle of their
// open and replay, before the last writer of the round. Then the parent
// reopens the store (replaying) and checks:
//   - the counter m is >= every k acknowledged in the round (no acknowledged
//     transaction lost) and >= the previous round's m;
//   - the whole store equals model(1..m) (nothing half-applied, nothing from
//     a later transaction, nothing stale);
//   - Store::fsck() finds no problem;
// and closes the store for the next round.
//
// Environment: STRATA_CRASH_KILLS (rounds, default 20), STRATA_CRASH_SEED
// (default: a hash of the pair name; printed, so a failing run can be
// repeated).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "child_process.h"
#include "store_compare.h"
#include "test_env.h"
#include "txn_gen.h"

namespace strata::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kReady = 0;  // first report: the store is open
constexpr int kDepth = 8;

uint64_t env_u64(const char *name, uint64_t dflt) {
  const char *v = std::getenv(name);
  if (!v || !*v) return dflt;
  return std::strtoull(v, nullptr, 0);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

Result<uint64_t> read_last(store::Store &s) {
  auto v = s.getxattr(kCounterCollection, kCounterObject, kLastXattr);
  if (!v.ok()) {
    // Before txn 1 there is neither the collection nor the counter.
    if (v.status().code() == -ENOENT || v.status().code() == -ENODATA) return uint64_t{0};
    return v.status();
  }
  try {
    return static_cast<uint64_t>(std::stoull(*v));
  } catch (...) {
    return Status::Error(EBADMSG, "counter xattr holds '" + *v + "'");
  }
}

// Child: crash-writer DIR CHECKPOINT_INTERVAL_MS
int crash_writer_main(const std::vector<std::string> &args) {
  if (args.size() != 2) {
    std::fprintf(stderr, "crash-writer: DIR CHECKPOINT_INTERVAL_MS\n");
    return 2;
  }
  store::StoreSettings settings;
  settings.checkpoint_interval_ms = std::stoll(args[1]);
  auto opened = store::Store::open(registry(), args[0], settings, child_logger());
  if (!opened.ok()) {
    std::fprintf(stderr, "crash-writer: %s\n", opened.status().ToString().c_str());
    return 3;
  }
  std::unique_ptr<store::Store> s = std::move(*opened);
  auto last = read_last(*s);
  if (!last.ok()) {
    std::fprintf(stderr, "crash-writer: %s\n", last.status().ToString().c_str());
    return 3;
  }
  report(kReady);

  TxnGenerator gen;
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(120);
  for (uint64_t k = *last + 1;; ++k) {
    {
      std::unique_lock lk(mu);
      cv.wait(lk, [&] { return in_flight < kDepth; });
      ++in_flight;
    }
    // Odd transactions are acknowledged once journaled (the OSD's mode),
    // even ones once applied: both must survive the kill.
    const auto when = k % 2 ? store::Store::Ack::kDurable : store::Store::Ack::kApplied;
    Status st = s->queue(gen.txn(k), [&, k](const Status &r) {
      if (!r.ok()) {
        std::fprintf(stderr, "crash-writer: txn %llu failed: %s\n",
                     static_cast<unsigned long long>(k), r.ToString().c_str());
        std::fflush(stderr);
        ::_exit(4);
      }
      report(k);
      std::lock_guard lk(mu);
      --in_flight;
      cv.notify_all();
    }, when);
    if (!st.ok()) {
      std::fprintf(stderr, "crash-writer: queue of txn %llu: %s\n",
                   static_cast<unsigned long long>(k), st.ToString().c_str());
      std::fflush(stderr);
      ::_exit(5);
    }
    if (Clock::now() > give_up) {
      std::fprintf(stderr, "crash-writer: nobody killed me after 120 s\n");
      ::_exit(6);
    }
  }
}
STRATA_CHILD_MODE("crash-writer", crash_writer_main);

struct KillResult {
  uint64_t max_acked = 0;
  uint64_t n_acked = 0;
  bool was_open = false;  // the writer had reported its store open
};

// Spawns a writer and SIGKILLs it `delay_ms` after it reported its store open
// (after_open), or `delay_ms` after the spawn, possibly during its replay.
KillResult spawn_and_kill(const std::string &dir, uint64_t ckpt_ms, uint64_t delay_ms,
                          bool after_open) {
  auto spawned = ChildProcess::spawn("crash-writer", {dir, std::to_string(ckpt_ms)});
  INFO(spawned.status().ToString());
  REQUIRE(spawned.ok());
  ChildProcess child = std::move(*spawned);
  std::vector<uint64_t> reports;
  auto is_open = [&] { return std::find(reports.begin(), reports.end(), kReady) != reports.end(); };
  if (after_open) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!is_open()) {
      auto r = child.read_reports(reports, 100);
      if (r == ChildProcess::Read::kEof || Clock::now() > deadline) {
        child.kill9();
        FAIL("the writer never opened the store: " << describe_wait_status(child.wait()));
      }
    }
  }
  const auto kill_at = Clock::now() + std::chrono::milliseconds(delay_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now());
    if (left.count() <= 0) break;
    if (child.read_reports(reports, static_cast<int>(left.count())) == ChildProcess::Read::kEof)
      break;
  }
  child.kill9();
  int status = child.wait();
  child.read_remaining(reports);  // acknowledgements written before it died
  INFO("writer " << describe_wait_status(status));
  REQUIRE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  KillResult res;
  res.was_open = is_open();
  for (uint64_t k : reports)
    if (k != kReady) {
      res.max_acked = std::max(res.max_acked, k);
      ++res.n_acked;
    }
  return res;
}

struct Totals {
  uint64_t kills = 0;
  uint64_t early_kills = 0;   // writers killed before they reported open
  uint64_t verified = 0;      // transactions checked against the model
  uint64_t acknowledged = 0;  // acknowledgements the parent saw
  uint64_t replays = 0;       // verifying reopens that re-applied records
  uint64_t replayed_records = 0;
  uint64_t torn_tails = 0;
  uint64_t unacked_survivors = 0;  // rounds where txns beyond the last ack survived
};

TEST_CASE("kill -9 at random points loses no acknowledged transaction and half-applies none",
          "[crash]") {
  const Pair &p = pair();
  const uint64_t rounds = env_u64("STRATA_CRASH_KILLS", 20);
  const uint64_t seed = env_u64("STRATA_CRASH_SEED", fnv1a(p.name) & 0xffffffff);
  std::printf("crash %s: seed %llu (STRATA_CRASH_SEED to repeat), %llu rounds\n", p.name.c_str(),
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(rounds));
  std::fflush(stdout);

  ScratchStore::Options opts;
  opts.journal_size = 16ull << 20;
  ScratchStore ss("crash", opts);
  SplitMix rng(seed);
  TxnGenerator gen;
  Model model;  // == model(1..m)
  uint64_t m = 0;
  Totals t;
  const uint64_t intervals[] = {50, 200, 1000};
  const auto started = Clock::now();

  for (uint64_t round = 1; round <= rounds; ++round) {
    const uint64_t ckpt_ms = intervals[rng.range(0, 2)];
    const uint64_t early = rng.percent(25) ? rng.range(1, 2) : 0;
    std::vector<uint64_t> delays;
    for (uint64_t i = 0; i < early; ++i) delays.push_back(rng.range(5, 150));
    const uint64_t delay_ms = rng.range(10, 300);
    INFO("round " << round << " (seed " << seed << "): " << early << " early kills, then a kill "
                  << delay_ms << " ms after open; checkpoint interval " << ckpt_ms
                  << " ms; the store was at " << m);

    uint64_t max_acked = 0, n_acked = 0;
    std::string how;
    for (uint64_t d : delays) {
      KillResult k = spawn_and_kill(ss.dir(), ckpt_ms, d, false);
      max_acked = std::max(max_acked, k.max_acked);
      n_acked += k.n_acked;
      ++t.kills;
      if (!k.was_open) ++t.early_kills;
      how += std::to_string(d) + (k.was_open ? " ms after spawn, " : " ms after spawn (opening), ");
    }
    KillResult k = spawn_and_kill(ss.dir(), ckpt_ms, delay_ms, true);
    max_acked = std::max(max_acked, k.max_acked);
    n_acked += k.n_acked;
    ++t.kills;
    how += std::to_string(delay_ms) + " ms after open";
    t.acknowledged += n_acked;

    CapturedLog log;
    auto opened = ss.open(test_settings(), &log.logger());
    INFO("reopen: " << opened.status().ToString() << "\nlog:\n" << log.text());
    REQUIRE(opened.ok());
    std::unique_ptr<store::Store> s = std::move(*opened);
    const store::ReplayReport rr = s->replay_report();
    if (rr.records) ++t.replays;
    t.replayed_records += rr.records;
    if (rr.torn_bytes) ++t.torn_tails;

    auto last = read_last(*s);
    INFO("counter: " << last.status().ToString());
    REQUIRE(last.ok());
    const uint64_t m2 = *last;
    INFO("acknowledged up to " << max_acked << " (" << n_acked << " acks), store holds up to " << m2
                               << "; replay: committed " << rr.committed_seq << ", " << rr.records
                               << " records, last seq " << rr.last_seq << ", torn " << rr.torn_bytes
                               << " bytes " << rr.detail);
    REQUIRE(m2 >= max_acked);
    REQUIRE(m2 >= m);
    if (m2 > max_acked) ++t.unacked_survivors;

    Status adv = gen.advance(model, m + 1, m2);
    INFO(adv.ToString());
    REQUIRE(adv.ok());
    std::string diff = diff_store(*s, model.state());
    INFO("store vs model(1.." << m2 << "): " << diff);
    REQUIRE(diff.empty());

    auto problems = s->fsck();
    INFO("fsck: " << problems.status().ToString() << "\nlog:\n" << log.text());
    REQUIRE(problems.ok());
    REQUIRE(*problems == 0);
    Status closed = s->close();
    INFO("close: " << closed.ToString());
    REQUIRE(closed.ok());
    s.reset();

    t.verified += m2 - m;
    m = m2;
    std::printf(
        "  round %2llu: killed %s (checkpoint every %4llu ms): acked up to %5llu, "
        "store at %5llu, replayed %4llu%s\n",
        static_cast<unsigned long long>(round), how.c_str(),
        static_cast<unsigned long long>(ckpt_ms), static_cast<unsigned long long>(max_acked),
        static_cast<unsigned long long>(m2), static_cast<unsigned long long>(rr.records),
        rr.torn_bytes ? ", torn tail" : "");
    std::fflush(stdout);
  }

  double secs = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf(
      "crash %s: %llu kills (%llu while opening), %llu txns verified (%llu acknowledged), "
      "%llu replays (%llu records), %llu torn tails, %llu rounds with unacknowledged "
      "survivors, final store %llu objects / %llu bytes, %.1f s\n",
      p.name.c_str(), static_cast<unsigned long long>(t.kills),
      static_cast<unsigned long long>(t.early_kills), static_cast<unsigned long long>(t.verified),
      static_cast<unsigned long long>(t.acknowledged), static_cast<unsigned long long>(t.replays),
      static_cast<unsigned long long>(t.replayed_records),
      static_cast<unsigned long long>(t.torn_tails),
      static_cast<unsigned long long>(t.unacked_survivors),
      static_cast<unsigned long long>(model.state().object_count()),
      static_cast<unsigned long long>(model.state().data_bytes()), secs);
  std::fflush(stdout);
  CHECK(t.kills >= rounds);
  CHECK(t.verified > 0);
}

}  // namespace
}  // namespace strata::testing
