// Crash recovery: a child process appends (and trims) as fast as it can and
// reports every acknowledged seq on a pipe; the test kills it with SIGKILL
// at a random moment, reopens the journal and checks that every
// acknowledged record the child had not trimmed replays with its content.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <random>

#include "journal_test_support.h"

using namespace strata::journal_test;

namespace {

// The child keeps this many acknowledged records untrimmed.
constexpr uint64_t kKeep = 16;

size_t length_of(uint64_t seq) { return 1 + (seq * 0x9E3779B1u >> 7) % 12000; }

// In the forked child: never returns.
[[noreturn]] void run_appender(const std::string &plugin, const std::string &path, int report_fd) {
  try {
    OpenArgs args(plugin, path);
    Journal j(plugin, args);
    uint64_t last = j.replay(0).result.last_seq;
    // Like a host after its checkpoint: the ring may be full of the records
    // the previous child left.
    if (last > kKeep) j.trim(last - kKeep);
    uint64_t next = last + 1;
    struct Ctx {
      int fd;
      Journal *journal;
      uint64_t seq;
    };
    // Callbacks run in seq order on the plugin's thread: report the seq,
    // then trim what the test no longer checks. Trimming here, not in the
    // appending thread, because that one blocks in append while the ring is
    // full (as a host's checkpoint thread would).
    auto on_durable = [](void *arg, int rc) {
      auto *c = static_cast<Ctx *>(arg);
      if (rc != 0) _exit(4);
      if (::write(c->fd, &c->seq, sizeof c->seq) != sizeof c->seq) _exit(3);
      if (c->seq > kKeep) c->journal->trim(c->seq - kKeep);
      delete c;
    };
    for (;; ++next)
      j.append(next, payload_for(next, length_of(next)), on_durable,
               new Ctx{report_fd, &j, next});
  } catch (const std::exception &e) {
    std::fprintf(stderr, "appender child: %s\n", e.what());
  }
  _exit(2);
}

// Collects reported seqs until `deadline`; false at EOF (the child is gone).
bool read_reports(int fd, std::chrono::steady_clock::time_point deadline,
                  std::vector<uint64_t> &out) {
  std::string pending;
  for (;;) {
    int wait_ms = -1;
    if (deadline != std::chrono::steady_clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return true;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc == 0) return true;
    if (rc < 0) continue;
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    pending.append(buf, static_cast<size_t>(n));
    size_t whole = pending.size() / 8 * 8;
    for (size_t i = 0; i < whole; i += 8) {
      uint64_t v;
      std::memcpy(&v, pending.data() + i, 8);
      out.push_back(v);
    }
    pending.erase(0, whole);
  }
}

void crash_and_recover(const std::string &plugin, const std::string &parent_dir,
                       uint64_t capacity, int rounds) {
  TempDir dir(parent_dir);
  const std::string path = dir.path() + "/journal";
  {
    OpenArgs args(plugin, path);
    Journal::create(plugin, args, capacity);
  }
  std::mt19937 rng(20240611u + static_cast<unsigned>(capacity));
  uint64_t acked_max = 0;
  uint64_t total_acks = 0;
  for (int round = 0; round < rounds; ++round) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    // The test process has no threads here (every journal is closed), so
    // the child may carry on without exec.
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      run_appender(plugin, path, fds[1]);
    }
    ::close(fds[1]);
    // Kill at a random moment once the child is under way (the first ack
    // may take a while on a busy disk).
    std::vector<uint64_t> acks;
    const auto start = std::chrono::steady_clock::now();
    bool alive = true;
    while (alive && acks.empty() &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
      alive = read_reports(fds[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(10),
                           acks);
    int run_ms = std::uniform_int_distribution<int>(0, 100)(rng);
    read_reports(fds[0], std::chrono::steady_clock::now() + std::chrono::milliseconds(run_ms),
                 acks);
    ::kill(pid, SIGKILL);
    read_reports(fds[0], std::chrono::steady_clock::time_point::max(), acks);
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    INFO("round " << round << " after " << run_ms << " ms; child "
                  << (WIFSIGNALED(status) ? "killed" : "exited ") << WEXITSTATUS(status));
    REQUIRE(WIFSIGNALED(status));
    for (size_t i = 1; i < acks.size(); ++i) REQUIRE(acks[i] == acks[i - 1] + 1);
    if (!acks.empty()) {
      REQUIRE(acks.front() > acked_max);
      acked_max = acks.back();
    }
    total_acks += acks.size();

    OpenArgs args(plugin, path);
    Journal j(plugin, args);
    Replayed r = j.replay(0);
    INFO("acknowledged up to " << acked_max << "; replay: " << r.records.size()
                               << " records, last " << r.result.last_seq << ", torn "
                               << r.result.torn_bytes << " bytes: " << r.result.detail);
    REQUIRE(r.result.last_seq >= acked_max);
    // Every record is intact and in order; nothing the child kept is missing.
    for (size_t i = 0; i < r.records.size(); ++i) {
      const auto &[seq, data] = r.records[i];
      if (i > 0) REQUIRE(seq == r.records[i - 1].first + 1);
      REQUIRE(data == payload_for(seq, length_of(seq)));
    }
    if (acked_max > 0) {
      REQUIRE_FALSE(r.records.empty());
      uint64_t must_have_from = acked_max > kKeep ? acked_max - kKeep + 1 : 1;
      REQUIRE(r.records.front().first <= must_have_from);
    }
  }
  // The child must have made real progress, wrapping the ring many times.
  CHECK(total_acks > 100);
  CHECK(acked_max * 6000 > capacity * 3);
}

}  // namespace

TEST_CASE("every acknowledged record survives SIGKILL of the file journal's process, 25 times",
          "[journal][file][crash]") {
  crash_and_recover("file", "/tmp", 512 * 1024, 25);
}

TEST_CASE("every acknowledged record survives SIGKILL of the tmpfs journal's process, 25 times",
          "[journal][tmpfs][crash]") {
  crash_and_recover("tmpfs", "/dev/shm", 512 * 1024, 25);
}
