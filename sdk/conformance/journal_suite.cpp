// The journal suite: the whole contract of strata/journal.h, checked
// against any journal-media plugin through its C vtable. Every test makes a
// fresh journal (FreshJournal) in its own scratch directory.
//
// Two tests damage the medium on purpose (torn tail, corruption before the
// tail). They find a record's bytes by searching the files at the journal's
// path for the record's payload, so they assume a plugin stores payloads
// verbatim under that path; for a plugin that does not (compression,
// encryption, media elsewhere) they warn and check nothing.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "kit.h"

namespace sc = strata::conformance;
using sc::Errno;
using sc::same_bytes;

namespace {

using Clock = std::chrono::steady_clock;

// Record bytes for a seq; `variant` gives a different record for the same seq.
std::string record_bytes(uint64_t seq, size_t len, uint64_t variant = 0) {
  return sc::pattern_bytes(len, seq * 1000003 + variant);
}

// Callbacks, in the order they ran, with their rc. Thread-safe.
class Acks {
 public:
  // The callback's arg for `seq`; valid while this object lives.
  void *arg_for(uint64_t seq) {
    std::lock_guard lk(mu_);
    return &slots_.emplace_back(Slot{this, seq});
  }
  static void callback(void *arg, int rc) {
    auto *slot = static_cast<Slot *>(arg);
    Acks *self = slot->owner;
    // The plugin must run callbacks without holding locks that stat needs:
    // a host learns how far the journal got from inside a callback.
    uint64_t durable = 0;
    if (self->journal_) durable = self->journal_->stat().durable_seq;
    {
      std::lock_guard lk(self->mu_);
      self->seen_.push_back({slot->seq, rc, durable});
    }
    self->cv_.notify_all();
  }
  // Makes callbacks record stat().durable_seq as they run.
  void watch(const sc::FreshJournal *j) { journal_ = j; }
  // True when n callbacks ran within `timeout`.
  bool wait_for(size_t n, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [&] { return seen_.size() >= n; });
  }
  struct Seen {
    uint64_t seq;
    int rc;
    uint64_t durable_seq;  // stat().durable_seq inside the callback (0 unless watched)
  };
  std::vector<Seen> seen() const {
    std::lock_guard lk(mu_);
    return seen_;
  }

 private:
  struct Slot {
    Acks *owner;
    uint64_t seq;
  };
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Slot> slots_;  // stable addresses
  std::vector<Seen> seen_;  // GUARDED_BY(mu_)
  const sc::FreshJournal *journal_ = nullptr;
};

int append_rc(const sc::FreshJournal &j, uint64_t seq, const std::string &data,
              strata_journal_done_cb cb = nullptr, void *arg = nullptr,
              std::string *msg = nullptr) {
  strata_err err{};
  int rc = j.ops().append(j.handle(), seq, data.data(), data.size(), cb, arg, &err);
  if (msg) *msg = err.msg;
  return rc;
}

void append(const sc::FreshJournal &j, uint64_t seq, const std::string &data,
            strata_journal_done_cb cb = nullptr, void *arg = nullptr) {
  strata_err err{};
  int rc = j.ops().append(j.handle(), seq, data.data(), data.size(), cb, arg, &err);
  if (rc != 0) throw sc::CallFailed("append(seq " + std::to_string(seq) + ")", rc, err);
}

void trim(const sc::FreshJournal &j, uint64_t upto) {
  strata_err err{};
  int rc = j.ops().trim(j.handle(), upto, &err);
  if (rc != 0) throw sc::CallFailed("trim(" + std::to_string(upto) + ")", rc, err);
}

void flush(const sc::FreshJournal &j) {
  strata_err err{};
  int rc = j.ops().flush(j.handle(), &err);
  if (rc != 0) throw sc::CallFailed("flush", rc, err);
}

struct Replay {
  int rc = 0;
  std::string msg;
  std::vector<std::pair<uint64_t, std::string>> records;
  strata_journal_replay_result result{};
};

Replay replay_rc(const sc::FreshJournal &j, uint64_t after_seq, int fail_at_record = -1) {
  Replay r;
  r.result.struct_size = sizeof r.result;
  struct Ctx {
    Replay *r;
    int fail_at;
  } ctx{&r, fail_at_record};
  auto visit = [](void *c, uint64_t seq, const void *data, size_t len) {
    auto *ctx = static_cast<Ctx *>(c);
    if (static_cast<int>(ctx->r->records.size()) == ctx->fail_at) return -EIO;
    ctx->r->records.emplace_back(seq, std::string(static_cast<const char *>(data), len));
    return 0;
  };
  strata_err err{};
  r.rc = j.ops().replay(j.handle(), after_seq, visit, &ctx, &r.result, &err);
  r.msg = err.msg;
  return r;
}

Replay replay(const sc::FreshJournal &j, uint64_t after_seq = 0) {
  Replay r = replay_rc(j, after_seq);
  if (r.rc != 0) {
    strata_err err{};
    std::snprintf(err.msg, sizeof err.msg, "%s", r.msg.c_str());
    throw sc::CallFailed("replay(after " + std::to_string(after_seq) + ")", r.rc, err);
  }
  return r;
}

// Appends seqs [first, last] with record_bytes(seq, len(seq)) and waits for
// every callback; `flush_each` waits for each record before the next, so
// every record goes to the medium in a write of its own.
template <class LenFn>
void append_range(const sc::FreshJournal &j, uint64_t first, uint64_t last, LenFn len,
                  bool flush_each = false) {
  Acks acks;
  for (uint64_t s = first; s <= last; ++s) {
    append(j, s, record_bytes(s, len(s)), &Acks::callback, acks.arg_for(s));
    if (flush_each) flush(j);
  }
  REQUIRE(acks.wait_for(last - first + 1));
  for (const Acks::Seen &a : acks.seen()) REQUIRE(a.rc == 0);
}

template <class LenFn>
void require_records(const Replay &r, uint64_t first, uint64_t last, LenFn len) {
  REQUIRE(r.records.size() == last - first + 1);
  for (size_t i = 0; i < r.records.size(); ++i) {
    INFO("record " << i);
    REQUIRE(r.records[i].first == first + i);
    REQUIRE(same_bytes(r.records[i].second, record_bytes(first + i, len(first + i))));
  }
}

// --- the medium, for the damage tests --------------------------------------

struct Found {
  std::string file;
  uint64_t offset = 0;
};

// Where `needle` is in the regular files at `path` (the path itself, or the
// files under it); nothing when absent or present more than once.
std::optional<Found> find_unique(const std::string &path, const std::string &needle) {
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    files.push_back(path);
  } else if (std::filesystem::is_directory(path, ec)) {
    for (const auto &e : std::filesystem::recursive_directory_iterator(path, ec))
      if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::optional<Found> found;
  for (const std::string &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    for (size_t pos = bytes.find(needle); pos != std::string::npos;
         pos = bytes.find(needle, pos + 1)) {
      if (found) return std::nullopt;
      found = Found{f, pos};
    }
  }
  return found;
}

void overwrite(const Found &at, uint64_t skip, const std::string &bytes) {
  int fd = ::open(at.file.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at.offset + skip));
  ::fsync(fd);
  ::close(fd);
  REQUIRE(n == static_cast<ssize_t>(bytes.size()));
}

size_t small_len(uint64_t seq) { return 1 + (seq * 37) % 700; }
size_t mixed_len(uint64_t seq) { return 1 + (seq * 2654435761u) % 9000; }

}  // namespace

TEST_CASE("records appended to a journal replay in order with their bytes after reopen",
          "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  append_range(j, 1, 60, mixed_len);
  j.reopen();
  Replay r = replay(j);
  require_records(r, 1, 60, mixed_len);
  CHECK(r.result.records == 60);
  CHECK(r.result.last_seq == 60);
  CHECK(r.result.torn_bytes == 0);
}

TEST_CASE("callbacks run once each, in seq order, each after its record is durable", "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  Acks acks;
  acks.watch(&j);
  for (uint64_t s = 1; s <= 300; ++s)
    append(j, s, record_bytes(s, small_len(s)), &Acks::callback, acks.arg_for(s));
  flush(j);
  REQUIRE(acks.wait_for(300));
  std::vector<Acks::Seen> seen = acks.seen();
  REQUIRE(seen.size() == 300);
  for (size_t i = 0; i < seen.size(); ++i) {
    INFO("callback " << i);
    CHECK(seen[i].seq == i + 1);
    CHECK(Errno(seen[i].rc) == Errno(0));
    CHECK(seen[i].durable_seq >= seen[i].seq);
  }
  CHECK(j.stat().durable_seq == 300);
}

TEST_CASE("appends queued together reach the medium in fewer writes than records", "[journal]") {
  sc::FreshJournal j(16 << 20);
  replay(j);
  Acks acks;
  for (uint64_t s = 1; s <= 3000; ++s)
    append(j, s, record_bytes(s, 100), &Acks::callback, acks.arg_for(s));
  flush(j);
  REQUIRE(acks.wait_for(3000));
  strata_journal_stat st = j.stat();
  INFO("device_writes " << st.device_writes << " for " << st.records_written << " records");
  CHECK(st.records_written == 3000);
  CHECK(st.device_writes >= 1);
  CHECK(st.device_writes < st.records_written);
}

TEST_CASE("a trimmed journal wraps around its ring many times and replays only valid records",
          "[journal]") {
  sc::FreshJournal j(256 * 1024);
  replay(j);
  const uint64_t capacity = j.stat().capacity_bytes;
  Acks acks;
  uint64_t bytes = 0;
  uint64_t seq = 0;
  // At least 20 laps of payload alone; trim keeps 10 to 18 records live.
  while (bytes < 20 * capacity) {
    ++seq;
    append(j, seq, record_bytes(seq, mixed_len(seq)), &Acks::callback, acks.arg_for(seq));
    bytes += mixed_len(seq);
    if (seq % 8 == 0 && seq > 10) {  // a host trims what it applied, i.e. what is durable
      flush(j);
      trim(j, seq - 10);
    }
  }
  const uint64_t last = seq;
  REQUIRE(acks.wait_for(last));
  j.reopen();
  Replay r = replay(j);
  CHECK(r.result.last_seq == last);
  CHECK(r.result.torn_bytes == 0);
  // Trimmed records may still be replayed (trim may be persisted lazily), but
  // nothing from an earlier lap: contiguous seqs, exact bytes, up to `last`.
  REQUIRE_FALSE(r.records.empty());
  CHECK(r.records.front().first <= last - 9);
  require_records(r, r.records.front().first, last, mixed_len);
}

TEST_CASE("trim frees space: used bytes fall and the first seq advances", "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  strata_journal_stat empty = j.stat();
  CHECK(empty.capacity_bytes > 0);
  CHECK(empty.used_bytes == 0);
  CHECK(empty.first_seq == 0);
  CHECK(empty.last_seq == 0);

  append_range(j, 1, 20, [](uint64_t) { return size_t{10000}; });
  strata_journal_stat full = j.stat();
  CHECK(full.used_bytes >= 20 * 10000);
  CHECK(full.first_seq == 1);
  CHECK(full.last_seq == 20);
  CHECK(full.durable_seq == 20);
  CHECK(full.records_written == 20);

  trim(j, 10);
  strata_journal_stat half = j.stat();
  CHECK(half.first_seq == 11);
  CHECK(half.used_bytes < full.used_bytes);
  CHECK(half.used_bytes >= 10 * 10000);

  trim(j, 20);
  strata_journal_stat none = j.stat();
  CHECK(none.used_bytes == 0);
  CHECK(none.first_seq == 0);
  CHECK(none.last_seq == 20);
}

TEST_CASE("append blocks while the journal is full and resumes when trim makes room", "[journal]") {
  sc::FreshJournal j(256 * 1024);
  replay(j);
  const uint64_t capacity = j.stat().capacity_bytes;
  const size_t len = 16 * 1024;
  const uint64_t total = 4 * capacity / len;  // four times what fits
  std::atomic<uint64_t> appended{0};
  std::atomic<bool> failed{false};
  std::thread appender([&] {
    try {
      for (uint64_t s = 1; s <= total; ++s) {
        append(j, s, record_bytes(s, len));
        appended = s;
      }
    } catch (...) {
      failed = true;
    }
  });

  // Wait until the appender stalls.
  uint64_t seen = 0;
  auto stable_since = Clock::now();
  const auto give_up = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < give_up && Clock::now() - stable_since < std::chrono::milliseconds(300)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    uint64_t now = appended;
    if (now != seen) {
      seen = now;
      stable_since = Clock::now();
    }
  }
  const uint64_t blocked_at = appended;
  INFO("appender stalled after " << blocked_at << " of " << total << " records");
  CHECK(blocked_at < total);
  CHECK(blocked_at * len <= capacity);
  CHECK_FALSE(failed);

  // Make room step by step until the appender is through.
  while (appended < total && !failed && Clock::now() < give_up + std::chrono::seconds(20)) {
    flush(j);
    trim(j, appended);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  appender.join();
  CHECK_FALSE(failed);
  CHECK(appended == total);
  flush(j);
  CHECK(j.stat().durable_seq == total);
}

TEST_CASE("a record larger than the whole journal fails with EFBIG", "[journal]") {
  sc::FreshJournal j(256 * 1024);
  replay(j);
  const uint64_t capacity = j.stat().capacity_bytes;
  std::string msg;
  CHECK(Errno(append_rc(j, 1, std::string(capacity + 1, 'x'), nullptr, nullptr, &msg)) ==
        Errno(-EFBIG));
  CHECK_FALSE(msg.empty());
  // The journal is still usable.
  append_range(j, 1, 3, small_len);
  j.reopen();
  require_records(replay(j), 1, 3, small_len);
}

TEST_CASE("a torn tail is discarded and reported, and appends continue after the last good record",
          "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  const size_t len = 3000;
  append_range(
      j, 1, 20, [&](uint64_t) { return len; }, true);
  j.close();

  std::optional<Found> at = find_unique(j.path(), record_bytes(20, len));
  if (!at) {
    WARN("the payload of the last record is not stored verbatim at " << j.path()
                                                                     << "; nothing checked");
    return;
  }
  overwrite(*at, len / 2, std::string(100, '\x5a'));

  j.reopen();
  Replay r = replay(j);
  require_records(r, 1, 19, [&](uint64_t) { return len; });
  CHECK(r.result.last_seq == 19);
  CHECK(r.result.torn_bytes > 0);
  CHECK(std::strlen(r.result.detail) > 0);

  // The next record takes seq 20 again; the torn one never comes back.
  Acks acks;
  append(j, 20, record_bytes(20, 500, 1), &Acks::callback, acks.arg_for(20));
  append(j, 21, record_bytes(21, 500, 1), &Acks::callback, acks.arg_for(21));
  REQUIRE(acks.wait_for(2));
  j.reopen();
  Replay again = replay(j);
  REQUIRE(again.records.size() == 21);
  CHECK(same_bytes(again.records[19].second, record_bytes(20, 500, 1)));
  CHECK(same_bytes(again.records[20].second, record_bytes(21, 500, 1)));
  CHECK(again.result.torn_bytes == 0);
}

TEST_CASE("corruption before valid later records fails replay with EUCLEAN and stops appends",
          "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  const size_t len = 3000;
  // Each record durable before the next is written: all were acknowledged.
  append_range(
      j, 1, 30, [&](uint64_t) { return len; }, true);
  j.close();

  std::optional<Found> at = find_unique(j.path(), record_bytes(10, len));
  if (!at) {
    WARN("the payload of record 10 is not stored verbatim at " << j.path() << "; nothing checked");
    return;
  }
  overwrite(*at, len / 2, std::string(100, '\x5a'));

  j.reopen();
  Replay r = replay_rc(j, 0);
  INFO("replay message: " << r.msg);
  CHECK(Errno(r.rc) == Errno(-EUCLEAN));
  CHECK(r.msg.find("offset") != std::string::npos);
  std::string msg;
  int rc = append_rc(j, 31, record_bytes(31, len), nullptr, nullptr, &msg);
  INFO("append message: " << msg);
  CHECK(rc < 0);
}

TEST_CASE("records survive close and reopen, and appends continue after them", "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  Acks acks;
  for (uint64_t s = 1; s <= 10; ++s)
    append(j, s, record_bytes(s, small_len(s)), &Acks::callback, acks.arg_for(s));
  j.close();  // waits for the callbacks
  CHECK(acks.seen().size() == 10);

  j.reopen();
  Replay first = replay(j);
  require_records(first, 1, 10, small_len);
  append_range(j, 11, 20, small_len);
  j.reopen();
  require_records(replay(j), 1, 20, small_len);
}

TEST_CASE("replay(after_seq) visits only newer records", "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  append_range(j, 1, 30, small_len);
  j.reopen();
  Replay r = replay(j, 20);
  require_records(r, 21, 30, small_len);
  CHECK(r.result.records == 10);
  CHECK(r.result.last_seq == 30);

  j.reopen();
  Replay none = replay(j, 40);
  CHECK(none.records.empty());
  CHECK(none.result.records == 0);
  CHECK(none.result.last_seq == 40);
}

TEST_CASE("the first append after open may skip seqs ahead of everything the journal held",
          "[journal]") {
  sc::FreshJournal j(4 << 20);
  replay(j);
  append_range(j, 1, 5, small_len);
  j.reopen();
  replay(j);
  append_range(j, 100, 101, small_len);
  j.reopen();
  Replay r = replay(j);
  REQUIRE(r.records.size() == 7);
  CHECK(r.records[4].first == 5);
  CHECK(r.records[5].first == 100);
  CHECK(r.records[6].first == 101);
  CHECK(same_bytes(r.records[6].second, record_bytes(101, small_len(101))));
  CHECK(r.result.last_seq == 101);
}

TEST_CASE("a fully trimmed journal continues from the host's seq after reopen", "[journal]") {
  sc::FreshJournal j(1 << 20);
  replay(j);
  append_range(j, 1, 50, small_len);
  trim(j, 50);
  j.reopen();
  Replay r = replay(j, 50);
  CHECK(r.records.empty());
  CHECK(r.result.last_seq == 50);
  append_range(j, 51, 60, small_len);
  j.reopen();
  require_records(replay(j, 50), 51, 60, small_len);
}

TEST_CASE("close waits for queued appends and runs every callback", "[journal]") {
  sc::FreshJournal j(16 << 20);
  replay(j);
  Acks acks;
  for (uint64_t s = 1; s <= 1000; ++s)
    append(j, s, record_bytes(s, small_len(s)), &Acks::callback, acks.arg_for(s));
  j.close();
  std::vector<Acks::Seen> seen = acks.seen();
  REQUIRE(seen.size() == 1000);
  for (size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].seq == i + 1);
    CHECK(Errno(seen[i].rc) == Errno(0));
  }
}

TEST_CASE("creating a journal over an existing one leaves it empty", "[journal]") {
  sc::FreshJournal j(1 << 20);
  replay(j);
  append_range(j, 1, 10, small_len);
  j.recreate(1 << 20);
  Replay r = replay(j);
  CHECK(r.records.empty());
  CHECK(r.result.last_seq == 0);
  CHECK(j.stat().used_bytes == 0);
}

TEST_CASE("a replay visitor's error stops replay with that error", "[journal]") {
  sc::FreshJournal j(1 << 20);
  replay(j);
  append_range(j, 1, 10, small_len);
  j.reopen();
  Replay r = replay_rc(j, 0, 3);
  CHECK(Errno(r.rc) == Errno(-EIO));
  CHECK(r.records.size() == 3);
}

TEST_CASE("append, trim, flush and stat may run from several threads at once", "[journal]") {
  sc::FreshJournal j(512 * 1024);
  replay(j);
  const uint64_t total = 2000;
  std::atomic<uint64_t> appended{0};
  std::atomic<bool> done{false};
  Acks acks;
  std::thread appender([&] {
    for (uint64_t s = 1; s <= total; ++s) {
      append(j, s, record_bytes(s, small_len(s) * 4), &Acks::callback, acks.arg_for(s));
      appended = s;
    }
    done = true;
  });
  std::thread trimmer([&] {
    while (!done) {
      uint64_t durable = j.stat().durable_seq;
      if (durable > 20) trim(j, durable - 20);
      std::this_thread::yield();
    }
  });
  std::thread flusher([&] {
    while (!done) flush(j);
  });
  appender.join();
  trimmer.join();
  flusher.join();
  REQUIRE(acks.wait_for(total));
  for (const Acks::Seen &a : acks.seen()) REQUIRE(a.rc == 0);
  j.reopen();
  Replay r = replay(j);
  REQUIRE_FALSE(r.records.empty());
  require_records(r, r.records.front().first, total, [](uint64_t s) { return small_len(s) * 4; });
}

// --- owner (ABI 1.3, STRATA_JOURNAL_CAP_OWNER_CHECK) ----------------------------

namespace {

// The journal's open args with an owner (or none when id is null).
struct OwnedArgs {
  OwnedArgs(const sc::FreshJournal &j, const char *id, const char *path) : args(*j.args()) {
    args.owner_id = id;
    args.owner_path = path;
  }
  strata_open_args args;
};

// open() with these args: the rc, and the plugin's message on failure.
std::pair<int, std::string> open_as(const sc::FreshJournal &j, const OwnedArgs &a) {
  strata_err err{};
  strata_journal *h = nullptr;
  int rc = j.ops().open(&a.args, &h, &err);
  if (h) j.ops().close(h);
  return {rc, rc == 0 ? std::string() : std::string(err.msg)};
}

bool checks_owner(const sc::FreshJournal &j) {
  if (j.caps() & STRATA_JOURNAL_CAP_OWNER_CHECK) return true;
  WARN("the plugin does not declare STRATA_JOURNAL_CAP_OWNER_CHECK: nothing to check");
  return false;
}

}  // namespace

TEST_CASE("a journal created for one owner refuses another with EXDEV naming both owners",
          "[journal]") {
  sc::FreshJournal j(1 << 20);
  if (!checks_owner(j)) return;
  j.close();
  OwnedArgs a(j, "conformance-owner-a", "/stores/a"), b(j, "conformance-owner-b", "/stores/b");
  strata_err err{};
  REQUIRE(j.ops().create(&a.args, 1 << 20, &err) == 0);
  auto [rc, msg] = open_as(j, b);
  INFO("open for another owner: rc " << rc << ": " << msg);
  CHECK(Errno(rc) == Errno(-EXDEV));
  CHECK(msg.find("conformance-owner-a") != std::string::npos);
  CHECK(msg.find("conformance-owner-b") != std::string::npos);
  CHECK(msg.find("/stores/a") != std::string::npos);
  CHECK(msg.find("/stores/b") != std::string::npos);
  CHECK(Errno(open_as(j, a).first) == Errno(0));  // its own owner opens it
  OwnedArgs nobody(j, nullptr, nullptr);
  CHECK(Errno(open_as(j, nobody).first) == Errno(0));  // a host that does not say is not checked
}

TEST_CASE("a journal that records no owner is adopted by the first owner that opens it",
          "[journal]") {
  sc::FreshJournal j(1 << 20);  // created without an owner
  if (!checks_owner(j)) return;
  replay(j);
  append_range(j, 1, 5, small_len);
  j.close();
  OwnedArgs a(j, "conformance-owner-a", "/stores/a"), b(j, "conformance-owner-b", "/stores/b");
  REQUIRE(open_as(j, a).first == 0);
  CHECK(Errno(open_as(j, b).first) == Errno(-EXDEV));
  CHECK(Errno(open_as(j, a).first) == Errno(0));
  j.reopen();  // adoption kept the records
  CHECK(replay(j).records.size() == 5);
}
