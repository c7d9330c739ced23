// The shared circular log on an in-memory medium: group commit, torn group
// writes, lazy trim persistence across crashes, pads and relocation, medium
// failures, foreign records. A "crash" is a copy of the medium's bytes taken
// while the log runs; recovery opens a new log on the copy.
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <random>
#include <thread>

#include "journal_log/circular_log.h"
#include "journal_log/format.h"
#include "journal_log/superblock_io.h"
#include "journal_test_support.h"
#include "mem_media.h"

using namespace strata::journal;
using strata::journal_test::MemDevice;
using strata::journal_test::MemMedia;
using strata::journal_test::payload_for;
namespace sdk = strata::sdk;

namespace {

constexpr uint32_t kBs = 4096;

std::shared_ptr<MemDevice> formatted_device(uint64_t capacity) {
  auto dev = std::make_shared<MemDevice>(medium_size_for(kBs, capacity));
  MemMedia media(dev);
  format_journal(media, kBs, capacity);
  return dev;
}

std::unique_ptr<CircularLog> open_log(std::shared_ptr<MemDevice> dev, LogOptions opts = {},
                                      bool holes = false) {
  return std::make_unique<CircularLog>(std::make_unique<MemMedia>(std::move(dev), holes), opts,
                                       sdk::Logger());
}

struct Replayed {
  std::vector<std::pair<uint64_t, std::string>> records;
  strata_journal_replay_result result{};
};

Replayed replay(CircularLog &log, uint64_t after = 0) {
  Replayed r;
  r.result = log.replay(after, [&](uint64_t seq, const void *d, size_t n) {
    r.records.emplace_back(seq, std::string(static_cast<const char *>(d), n));
    return 0;
  });
  return r;
}

// Callback target that remembers the newest acknowledged seq.
struct AckCounter {
  std::atomic<uint64_t> newest{0};
  std::atomic<uint64_t> count{0};
  std::atomic<int> first_error{0};
  static void cb(void *arg, int rc) {
    auto *self = static_cast<AckCounter *>(arg);
    if (rc != 0 && self->first_error == 0) self->first_error = rc;
    self->count++;
  }
};

// For callbacks that must know their seq; trims all but the newest `keep`
// acknowledged records (from the callback: the appending thread may be
// blocked in append waiting for room).
struct SeqAck {
  AckCounter *counter;
  CircularLog *log;
  uint64_t keep;
  uint64_t seq;
  static void cb(void *arg, int rc) {
    auto *a = static_cast<SeqAck *>(arg);
    if (rc == 0) {
      a->counter->newest = a->seq;
      if (a->seq > a->keep) a->log->trim(a->seq - a->keep);
    }
    AckCounter::cb(a->counter, rc);
    delete a;
  }
};

// Records 1..n of 100 bytes, each flushed (acknowledged) before the next.
void append_flushed(CircularLog &log, uint64_t n) {
  for (uint64_t s = 1; s <= n; ++s) {
    std::string p = payload_for(s, 100);
    log.append(s, p.data(), p.size(), nullptr, nullptr);
    log.flush();
  }
}

size_t varied_len(uint64_t seq) { return (seq * 2654435761u >> 5) % 9000; }

void require_contiguous_and_intact(const Replayed &r, size_t (*len)(uint64_t)) {
  for (size_t i = 0; i < r.records.size(); ++i) {
    const auto &[seq, data] = r.records[i];
    INFO("record " << i << " seq " << seq);
    if (i > 0) REQUIRE(seq == r.records[i - 1].first + 1);
    REQUIRE(data == payload_for(seq, len(seq)));
  }
}

void wait_for_count(const AckCounter &acks, uint64_t n) {
  for (int i = 0; i < 20000 && acks.count < n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(acks.count >= n);
}

}  // namespace

TEST_CASE("records queued while a write is in flight reach the medium in one write",
          "[journal_log]") {
  auto dev = formatted_device(1 << 20);
  auto log = open_log(dev);
  replay(*log);
  AckCounter acks;
  dev->hold_writes(true);
  log->append(1, "first", 5, &AckCounter::cb, &acks);
  dev->wait_until_write_held();  // record 1 is in flight on its own
  for (uint64_t s = 2; s <= 50; ++s) {
    std::string p = payload_for(s, 100);
    log->append(s, p.data(), p.size(), &AckCounter::cb, &acks);
  }
  CHECK(acks.count == 0);
  dev->hold_writes(false);
  log->flush();
  wait_for_count(acks, 50);
  strata_journal_stat st = log->stat();
  CHECK(st.records_written == 50);
  CHECK(st.device_writes == 2);
  CHECK(st.durable_seq == 50);
}

TEST_CASE("a torn group-commit write is a torn tail even when later records of it survive",
          "[journal_log]") {
  auto dev = formatted_device(1 << 20);
  uint64_t second_record_offset = 0;
  {
    auto log = open_log(dev);
    replay(*log);
    AckCounter acks;
    std::string first = payload_for(1, 3000);
    log->append(1, first.data(), first.size(), &AckCounter::cb, &acks);
    log->flush();
    dev->hold_writes(true);
    std::string two = payload_for(2, 3000);
    log->append(2, two.data(), two.size(), &AckCounter::cb, &acks);
    dev->wait_until_write_held();  // 2 goes alone ...
    for (uint64_t s = 3; s <= 10; ++s) {  // ... 3..10 together, after it
      std::string p = payload_for(s, 3000);
      log->append(s, p.data(), p.size(), &AckCounter::cb, &acks);
    }
    dev->hold_writes(false);
    log->flush();
    second_record_offset = 2 * kBs + record_footprint(3000, kBs);
  }
  // The crash tore the write of 3..10: record 3 did not make it, 4..10 did.
  // None of them was acknowledged, so this is a torn tail, not corruption.
  dev->damage(second_record_offset + record_footprint(3000, kBs) + 100, 50);
  {
    auto log = open_log(dev);
    Replayed r = replay(*log);
    REQUIRE(r.records.size() == 2);
    CHECK(r.result.last_seq == 2);
    CHECK(r.result.torn_bytes >= 8 * record_footprint(3000, kBs));
    CHECK(std::string(r.result.detail).find("up to seq 10") != std::string::npos);
    // A new 3 of the same size: the chain then reaches the stale 4, which
    // must not be taken for the new run's successor.
    std::string three = payload_for(3, 3000).replace(0, 3, "new");
    log->append(3, three.data(), three.size(), nullptr, nullptr);
    log->flush();
  }
  auto log = open_log(dev);
  Replayed r = replay(*log);
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[2].second.substr(0, 3) == "new");
  CHECK(r.result.last_seq == 3);
}

TEST_CASE("damage to an acknowledged record before later ones fails replay with EUCLEAN",
          "[journal_log]") {
  auto dev = formatted_device(1 << 20);
  {
    auto log = open_log(dev);
    replay(*log);
    append_flushed(*log, 10);
  }
  dev->damage(2 * kBs + 4 * kBs + 70, 10);  // inside record 5
  auto log = open_log(dev);
  try {
    replay(*log);
    FAIL("replay succeeded");
  } catch (const sdk::Error &e) {
    std::string msg = e.what();
    CHECK(e.code() == -EUCLEAN);
    CHECK(msg.find("at byte 24576") != std::string::npos);
    CHECK(msg.find("after seq 4") != std::string::npos);
    CHECK(msg.find("record seq 6") != std::string::npos);
  }
  try {
    log->append(11, "x", 1, nullptr, nullptr);
    FAIL("append succeeded");
  } catch (const sdk::Error &e) {
    CHECK(e.code() == -EUCLEAN);
  }
}

TEST_CASE("a failed medium write fails its callbacks and every later append and flush",
          "[journal_log]") {
  auto dev = formatted_device(1 << 20);
  auto log = open_log(dev);
  replay(*log);
  AckCounter acks;
  log->append(1, "ok", 2, &AckCounter::cb, &acks);
  log->flush();
  dev->fail_writes(true);
  log->append(2, "lost", 4, &AckCounter::cb, &acks);
  wait_for_count(acks, 2);
  CHECK(acks.first_error == -EIO);
  CHECK_THROWS_AS(log->flush(), sdk::Error);
  try {
    log->append(3, "x", 1, nullptr, nullptr);
    FAIL("append after a failed write succeeded");
  } catch (const sdk::Error &e) {
    CHECK(e.code() == -EIO);
  }
}

TEST_CASE("a crash at any moment of a wrapping, trimmed log loses no acknowledged record",
          "[journal_log]") {
  // Lazy trim persistence at its laziest (never due) and at its eagerest.
  for (int interval_ms : {3'600'000, 0}) {
    INFO("trim persist interval " << interval_ms << " ms");
    auto dev = formatted_device(128 * 1024);
    auto log = open_log(dev, LogOptions{64 * 1024, std::chrono::milliseconds(interval_ms)});
    replay(*log);
    constexpr uint64_t kKeep = 8;
    AckCounter acks;
    std::atomic<bool> stop{false};
    std::thread appender([&] {
      for (uint64_t s = 1; !stop; ++s) {
        std::string p = payload_for(s, varied_len(s));
        log->append(s, p.data(), p.size(), &SeqAck::cb, new SeqAck{&acks, log.get(), kKeep, s});
      }
    });
    // Stops the appender also when a REQUIRE below throws.
    struct Joiner {
      std::atomic<bool> &stop;
      std::thread &t;
      ~Joiner() {
        stop = true;
        if (t.joinable()) t.join();
      }
    } joiner{stop, appender};
    std::mt19937 rng(7);
    for (int crash = 0; crash < 150; ++crash) {
      std::this_thread::sleep_for(
          std::chrono::microseconds(std::uniform_int_distribution<int>(100, 3000)(rng)));
      const uint64_t acked = acks.newest;  // before the copy: its bytes are in it
      auto copy = std::make_shared<MemDevice>(dev->snapshot());
      // After the copy: the host had trimmed at most this - kKeep by then.
      const uint64_t acked_after = acks.newest;
      auto recovered = open_log(copy);
      Replayed r = replay(*recovered);
      INFO("crash " << crash << ": acknowledged " << acked << " (" << acked_after
                    << " after the copy), replayed " << r.records.size() << " up to "
                    << r.result.last_seq << ", torn " << r.result.torn_bytes << ": "
                    << r.result.detail);
      require_contiguous_and_intact(r, varied_len);
      REQUIRE(r.result.last_seq >= acked);
      // Acknowledged and not yet trimmed when the copy was taken: present.
      const uint64_t untrimmed_from = acked_after > kKeep ? acked_after - kKeep + 1 : 1;
      if (acked > 0 && untrimmed_from <= acked) {
        REQUIRE_FALSE(r.records.empty());
        REQUIRE(r.records.front().first <= untrimmed_from);
      }
    }
    stop = true;
    appender.join();
    uint64_t laps = log->stat().last_seq * 4500 / (128 * 1024);
    INFO("about " << laps << " laps");
    CHECK(laps >= 5);
    log.reset();
  }
}

TEST_CASE("a record that does not fit before the ring's end moves to its start and replays",
          "[journal_log]") {
  auto dev = formatted_device(64 * 1024);
  auto log = open_log(dev, LogOptions{1 << 20, std::chrono::hours(1)});
  replay(*log);
  // 40 KiB of records, all trimmed: the tail sits at 40 KiB, the log is empty.
  for (uint64_t s = 1; s <= 10; ++s) {
    std::string p = payload_for(s, 3000);
    log->append(s, p.data(), p.size(), nullptr, nullptr);
  }
  log->flush();
  log->trim(10);
  // 48 KiB cannot go at 40 KiB: it starts the next lap at offset 0.
  std::string big = payload_for(11, 48 * 1024 - 64);
  log->append(11, big.data(), big.size(), nullptr, nullptr);
  log->flush();
  auto copy = std::make_shared<MemDevice>(dev->snapshot());  // a crash
  auto recovered = open_log(copy);
  Replayed r = replay(*recovered, 10);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].first == 11);
  CHECK(r.records[0].second == big);
  // And one record exactly as large as the ring.
  log->trim(11);
  std::string whole = payload_for(12, 64 * 1024 - 64);
  log->append(12, whole.data(), whole.size(), nullptr, nullptr);
  log->flush();
  copy = std::make_shared<MemDevice>(dev->snapshot());
  recovered = open_log(copy);
  r = replay(*recovered, 11);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].second == whole);
}

TEST_CASE("records of an earlier journal on the same medium are never replayed",
          "[journal_log]") {
  auto dev = formatted_device(1 << 20);
  {
    auto log = open_log(dev);
    replay(*log);
    for (uint64_t s = 1; s <= 20; ++s) {
      std::string p = payload_for(s, 500);
      log->append(s, p.data(), p.size(), nullptr, nullptr);
    }
  }
  {
    MemMedia media(dev);  // a new journal over the old bytes, as on a block device
    format_journal(media, kBs, 1 << 20);
  }
  auto log = open_log(dev);
  Replayed r = replay(*log);
  CHECK(r.records.empty());
  CHECK(r.result.torn_bytes == 0);
  // A crash of the new journal (no clean close) makes replay search the
  // whole ring, where the old records must not count either.
  log->append(1, "n", 1, nullptr, nullptr);
  log->flush();
  auto copy = std::make_shared<MemDevice>(dev->snapshot());
  auto recovered = open_log(copy);
  r = replay(*recovered);
  REQUIRE(r.records.size() == 1);
  CHECK(r.records[0].second == "n");
  CHECK(r.result.torn_bytes == 0);
}

TEST_CASE("after a clean close replay reads only the log, not the whole ring",
          "[journal_log]") {
  const uint64_t capacity = 8 << 20;
  auto dev = formatted_device(capacity);
  {
    auto log = open_log(dev);
    replay(*log);
    log->append(1, "a", 1, nullptr, nullptr);
  }
  uint64_t before = dev->bytes_read();
  {
    auto log = open_log(dev);
    CHECK(replay(*log).records.size() == 1);
  }
  CHECK(dev->bytes_read() - before < capacity / 4);
  // Without the clean close (a crash) the whole ring is searched.
  {
    auto log = open_log(dev);
    replay(*log);
    log->append(2, "b", 1, nullptr, nullptr);
    log->flush();
    auto copy = std::make_shared<MemDevice>(dev->snapshot());
    auto recovered = open_log(copy);
    CHECK(replay(*recovered).records.size() == 2);
    CHECK(copy->bytes_read() >= capacity);
  }
}

TEST_CASE("after a crash, the search past the log skips what the medium says was never "
          "written, and still finds damage before the tail",
          "[journal_log]") {
  // A tmpfs journal of 1 GiB took 32 s to reopen on a loaded machine when
  // this search read (and so faulted in) every page of the ring.
  const uint64_t capacity = 8 << 20;
  auto dev = formatted_device(capacity);
  {
    auto log = open_log(dev);
    replay(*log);
    append_flushed(*log, 10);
    auto copy = dev->crash_copy();
    auto recovered = open_log(copy, {}, true);
    CHECK(replay(*recovered).records.size() == 10);
    CHECK(copy->bytes_read() < capacity / 4);  // the read-ahead window, not the ring
  }
  // The same crash state with record 5 damaged: records after it were
  // written, so they are read and the loss is found.
  auto copy = dev->crash_copy();
  copy->damage(2 * kBs + 4 * kBs + 70, 10);
  auto recovered = open_log(copy, {}, true);
  try {
    replay(*recovered);
    FAIL("replay succeeded");
  } catch (const sdk::Error &e) {
    CHECK(e.code() == -EUCLEAN);
  }
}

TEST_CASE("appends out of seq order are refused", "[journal_log]") {
  auto dev = formatted_device(1 << 20);
  auto log = open_log(dev);
  replay(*log);
  CHECK_THROWS_AS(log->append(0, "z", 1, nullptr, nullptr), sdk::Error);
  log->append(5, "a", 1, nullptr, nullptr);  // the first may skip ahead
  try {
    log->append(7, "b", 1, nullptr, nullptr);
    FAIL("a gap after the first append was accepted");
  } catch (const sdk::Error &e) {
    CHECK(e.code() == -EINVAL);
  }
  CHECK_THROWS_AS(log->append(5, "c", 1, nullptr, nullptr), sdk::Error);
  log->append(6, "d", 1, nullptr, nullptr);
  log->flush();
  CHECK(log->stat().last_seq == 6);
}

namespace {

// Records 1..10 of 100 bytes, one block each, every one acknowledged; then
// the payload of record `bad` damaged.
std::shared_ptr<MemDevice> ten_records_with_damaged(uint64_t bad) {
  auto dev = formatted_device(1 << 20);
  {
    auto log = open_log(dev);
    replay(*log);
    append_flushed(*log, 10);
  }
  dev->damage(2 * kBs + (bad - 1) * kBs + 70, 10);
  return dev;
}

}  // namespace

TEST_CASE("a damaged record the host has already checkpointed does not stop replay",
          "[journal_log]") {
  auto dev = ten_records_with_damaged(5);
  auto log = open_log(dev);
  Replayed r = replay(*log, 6);  // the host holds everything up to seq 6
  REQUIRE(r.records.size() == 4);
  CHECK(r.records.front().first == 7);
  require_contiguous_and_intact(r, [](uint64_t) -> size_t { return 100; });
  CHECK(r.result.last_seq == 10);
  CHECK(r.result.torn_bytes == 0);
  const std::string note = r.result.detail;
  INFO(note);
  CHECK(note.find("skipped a damaged record") != std::string::npos);
  CHECK(note.find("seqs 5..5") != std::string::npos);
  // The log goes on, and the next replay skips the damaged record again.
  log->append(11, "eleven", 6, nullptr, nullptr);
  log->flush();
  log.reset();
  log = open_log(dev);
  CHECK(replay(*log, 6).records.size() == 5);
}

TEST_CASE("a damaged record the host still needs fails replay even when later ones are covered",
          "[journal_log]") {
  auto dev = ten_records_with_damaged(5);
  auto log = open_log(dev);
  try {
    replay(*log, 4);  // seq 5 is not in the host's checkpoint
    FAIL("replay succeeded");
  } catch (const sdk::Error &e) {
    CHECK(e.code() == -EUCLEAN);
  }
  // How far the log went is known, for a repair to say what it drops.
  CHECK(log->stat().last_seq == 10);
}

TEST_CASE("a journal created for one owner refuses another and names both", "[journal_log]") {
  auto dev = std::make_shared<MemDevice>(medium_size_for(kBs, 1 << 20));
  {
    MemMedia media(dev);
    format_journal(media, kBs, 1 << 20, {"fsid-a", "/stores/a"});
  }
  open_log(dev)->claim({"fsid-a", "/stores/a"});  // its owner: fine
  try {
    open_log(dev)->claim({"fsid-b", "/stores/b"});
    FAIL("another owner was accepted");
  } catch (const sdk::Error &e) {
    const std::string msg = e.what();
    CHECK(e.code() == -EXDEV);
    CHECK(msg.find("fsid-a") != std::string::npos);
    CHECK(msg.find("/stores/a") != std::string::npos);
    CHECK(msg.find("fsid-b") != std::string::npos);
    CHECK(msg.find("/stores/b") != std::string::npos);
  }
}

TEST_CASE("a journal made without an owner is adopted by the first owner that opens it",
          "[journal_log]") {
  auto dev = formatted_device(1 << 20);  // as before owners existed
  {
    auto log = open_log(dev);
    log->claim({});  // a host that does not say checks nothing
    log->claim({"fsid-a", "/stores/a"});
    replay(*log);
    log->append(1, "one", 3, nullptr, nullptr);
    log->flush();
  }
  MemMedia media(dev);
  CHECK(load_superblock(media).owner_id == "fsid-a");
  auto log = open_log(dev);
  CHECK_THROWS_AS(log->claim({"fsid-b", "/stores/b"}), sdk::Error);
  log = open_log(dev);
  log->claim({"fsid-a", "/stores/a"});
  CHECK(replay(*log).records.size() == 1);
}
