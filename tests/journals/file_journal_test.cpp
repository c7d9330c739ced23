// The `file` journal plugin: io_uring and its fallback, O_DIRECT, the layout
// on the medium (preallocation, block alignment), superblock redundancy.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <fstream>
#include <iterator>

#include "journal_log/format.h"
#include "journal_test_support.h"

using namespace strata::journal_test;
namespace fmt = strata::journal;

namespace {

void overwrite(const std::string &path, uint64_t offset, const std::string &bytes) {
  int fd = ::open(path.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
          static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// Appends seqs [first, first + n) with payload_for(seq, len(seq)) and waits
// for every callback.
template <class LenFn>
void append_and_wait(Journal &j, uint64_t first, uint64_t n, LenFn len) {
  Acks acks;
  for (uint64_t s = first; s < first + n; ++s)
    j.append(s, payload_for(s, len(s)), &Acks::callback, acks.arg_for(s));
  acks.wait_for(n);
  for (const auto &[seq, rc] : acks.seen()) REQUIRE(rc == 0);
}

void check_replay(Journal &j, uint64_t first, uint64_t last, size_t (*len)(uint64_t)) {
  Replayed r = j.replay(0);
  REQUIRE(r.records.size() == last - first + 1);
  for (size_t i = 0; i < r.records.size(); ++i) {
    REQUIRE(r.records[i].first == first + i);
    REQUIRE(r.records[i].second == payload_for(first + i, len(first + i)));
  }
}

size_t small_len(uint64_t seq) { return 10 + seq % 300; }
size_t mixed_len(uint64_t seq) { return (seq * 2654435761u) % 20000; }

}  // namespace

TEST_CASE("the file journal writes through io_uring with O_DIRECT and says so in the host log",
          "[journal][file]") {
  TempDir dir;
  HostLog log;
  OpenArgs args("file", dir.path() + "/journal", {}, &log);
  Journal::create("file", args, 1 << 20);
  {
    Journal j("file", args);
    // RWF_DSYNC writes are the default sync mode.
    CHECK(log.contains("I/O: io_uring, O_DIRECT, RWF_DSYNC writes"));
    CHECK((j.caps() & STRATA_JOURNAL_CAP_DIRECT_IO) != 0);
    CHECK((j.caps() & STRATA_JOURNAL_CAP_VOLATILE) == 0);
    j.replay();
    append_and_wait(j, 1, 200, small_len);
    strata_journal_stat st = j.stat();
    CHECK(st.records_written == 200);
    CHECK(st.device_writes >= 1);
    CHECK(st.device_writes <= 200);
    CHECK(st.durable_seq == 200);
  }
  Journal j("file", args);
  check_replay(j, 1, 200, small_len);
}

TEST_CASE("journal_io = pwrite falls back to pwrite + fdatasync and keeps every record",
          "[journal][file]") {
  TempDir dir;
  HostLog log;
  OpenArgs args("file", dir.path() + "/journal",
                {{"journal_io", "pwrite"}, {"journal_sync", "fdatasync"}}, &log);
  Journal::create("file", args, 4 << 20);
  {
    Journal j("file", args);
    CHECK(log.contains("I/O: pwrite, O_DIRECT, fdatasync"));
    j.replay();
    append_and_wait(j, 1, 100, mixed_len);
  }
  Journal j("file", args);
  check_replay(j, 1, 100, mixed_len);
}

TEST_CASE("journal_sync = dsync makes writes durable with RWF_DSYNC and keeps every record",
          "[journal][file]") {
  TempDir dir;
  HostLog log;
  OpenArgs args("file", dir.path() + "/journal", {{"journal_sync", "dsync"}}, &log);
  Journal::create("file", args, 4 << 20);
  {
    Journal j("file", args);
    CHECK(log.contains("RWF_DSYNC writes"));
    j.replay();
    append_and_wait(j, 1, 100, mixed_len);
  }
  Journal j("file", args);
  check_replay(j, 1, 100, mixed_len);
}

TEST_CASE("a file journal is preallocated: two superblock blocks plus the capacity, no holes",
          "[journal][file]") {
  TempDir dir;
  OpenArgs args("file", dir.path() + "/journal");
  Journal::create("file", args, (1 << 20) + 1000);  // rounded down to whole blocks
  struct stat st;
  REQUIRE(::stat(args.path().c_str(), &st) == 0);
  CHECK(st.st_size == 2 * 4096 + (1 << 20));
  CHECK(st.st_blocks * 512 >= st.st_size);
  Journal j("file", args);
  CHECK(j.stat().capacity_bytes == 1 << 20);
}

TEST_CASE("with an 8 KiB block size every record starts on an 8 KiB boundary",
          "[journal][file]") {
  TempDir dir;
  OpenArgs args("file", dir.path() + "/journal", {{"journal_block_size", "8192"}});
  Journal::create("file", args, 512 * 1024);
  {
    Journal j("file", args);
    j.replay();
    append_and_wait(j, 1, 30, mixed_len);
  }
  // Walk the ring as laid out: superblocks in blocks 0 and 1, records from
  // block 2 on, each one a header on a block boundary.
  const uint64_t bs = 8192;
  std::string image = read_file(args.path());
  REQUIRE(image.size() == 2 * bs + 512 * 1024);
  uint64_t off = 2 * bs;
  for (uint64_t seq = 1; seq <= 30; ++seq) {
    INFO("seq " << seq << " at offset " << off);
    REQUIRE(off % bs == 0);
    auto h = fmt::decode_record_header(reinterpret_cast<const uint8_t *>(image.data()) + off);
    REQUIRE(h);
    REQUIRE(h->seq == seq);
    REQUIRE(h->payload_len == mixed_len(seq));
    REQUIRE(image.compare(off + fmt::kRecordHeaderSize, h->payload_len,
                          payload_for(seq, mixed_len(seq))) == 0);
    off += fmt::record_footprint(h->payload_len, bs);
  }
}

TEST_CASE("create refuses a block size that is not a power of two", "[journal][file]") {
  TempDir dir;
  OpenArgs args("file", dir.path() + "/journal", {{"journal_block_size", "6000"}});
  std::string msg;
  CHECK(Journal::create_rc("file", args, 1 << 20, &msg) == -EINVAL);
  CHECK(msg.find("power of two") != std::string::npos);
}

TEST_CASE("a journal opens from the other superblock copy when one is destroyed",
          "[journal][file]") {
  TempDir dir;
  OpenArgs args("file", dir.path() + "/journal");
  Journal::create("file", args, 1 << 20);
  {
    Journal j("file", args);
    j.replay();
    append_and_wait(j, 1, 50, small_len);
  }
  for (uint64_t copy : {0, 1}) {
    // Each open and close rewrites both copies, so wiping one at a time
    // always leaves the other to open from.
    overwrite(args.path(), copy * 4096, std::string(4096, 'x'));
    Journal j("file", args);
    check_replay(j, 1, 50, small_len);
  }
}

TEST_CASE("a journal path that is a directory holds the journal in <dir>/journal",
          "[journal][file]") {
  TempDir dir;
  OpenArgs args("file", dir.path());
  Journal::create("file", args, 1 << 20);
  struct stat st;
  REQUIRE(::stat((dir.path() + "/journal").c_str(), &st) == 0);
  {
    Journal j("file", args);
    j.replay();
    append_and_wait(j, 5, 3, small_len);
  }
  Journal::destroy("file", args);
  CHECK(::stat((dir.path() + "/journal").c_str(), &st) != 0);
}

TEST_CASE("a file that is not a journal fails to open with EUCLEAN", "[journal][file]") {
  TempDir dir;
  OpenArgs args("file", dir.path() + "/journal");
  {
    std::ofstream out(args.path(), std::ios::binary);
    out << std::string(64 * 1024, 'z');
  }
  try {
    Journal j("file", args);
    FAIL("open succeeded");
  } catch (const CallFailed &e) {
    CHECK(e.rc() == -EUCLEAN);
    CHECK(std::string(e.what()).find("superblock") != std::string::npos);
  }
}

TEST_CASE("a journal already open refuses a second open with EBUSY", "[journal][file][tmpfs]") {
  for (const char *plugin : {"file", "tmpfs"}) {
    INFO(plugin);
    TempDir dir(std::string(plugin) == "file" ? "/tmp" : "/dev/shm");
    OpenArgs args(plugin, dir.path() + "/journal");
    Journal::create(plugin, args, 1 << 20);
    {
      Journal first(plugin, args);
      try {
        Journal second(plugin, args);
        FAIL("second open succeeded");
      } catch (const CallFailed &e) {
        CHECK(e.rc() == -EBUSY);
      }
    }
    Journal again(plugin, args);  // free once the first is closed
  }
}
