// The `tmpfs` journal plugin: a memory-mapped file, volatile by declaration.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "journal_log/seek_data.h"
#include "journal_test_support.h"

using namespace strata::journal_test;

TEST_CASE("the tmpfs journal declares itself VOLATILE and not DIRECT_IO", "[journal][tmpfs]") {
  TempDir dir("/dev/shm");
  HostLog log;
  OpenArgs args("tmpfs", dir.path() + "/journal", {}, &log);
  Journal::create("tmpfs", args, 1 << 20);
  Journal j("tmpfs", args);
  CHECK((j.caps() & STRATA_JOURNAL_CAP_VOLATILE) != 0);
  CHECK((j.caps() & STRATA_JOURNAL_CAP_DIRECT_IO) == 0);
  CHECK(log.contains("survives a process crash, not a reboot"));
  CHECK_FALSE(log.contains("not on tmpfs"));
}

TEST_CASE("a tmpfs journal file is preallocated and keeps records across reopen",
          "[journal][tmpfs]") {
  TempDir dir("/dev/shm");
  OpenArgs args("tmpfs", dir.path() + "/journal");
  Journal::create("tmpfs", args, 256 * 1024);
  struct stat st;
  REQUIRE(::stat(args.path().c_str(), &st) == 0);
  CHECK(st.st_size == 2 * 4096 + 256 * 1024);
  CHECK(st.st_blocks * 512 >= st.st_size);  // memory reserved, no SIGBUS later
  {
    Journal j("tmpfs", args);
    j.replay();
    // Several laps of a small ring.
    Acks acks;
    for (uint64_t s = 1; s <= 400; ++s) {
      j.append(s, payload_for(s, 3000), &Acks::callback, acks.arg_for(s));
      if (s > 20) j.trim(s - 20);
    }
    acks.wait_for(400);
  }
  Journal j("tmpfs", args);
  Replayed r = j.replay(0);
  REQUIRE_FALSE(r.records.empty());
  CHECK(r.records.back().first == 400);
  for (const auto &[seq, data] : r.records) CHECK(data == payload_for(seq, 3000));
  CHECK(r.result.torn_bytes == 0);
}

TEST_CASE("a tmpfs journal outside tmpfs works but warns in the host log", "[journal][tmpfs]") {
  TempDir dir("/tmp");
  HostLog log;
  OpenArgs args("tmpfs", dir.path() + "/journal", {}, &log);
  Journal::create("tmpfs", args, 1 << 20);
  Journal j("tmpfs", args);
  CHECK(log.contains("WARN"));
  CHECK(log.contains("not on tmpfs"));
}

TEST_CASE("destroying a tmpfs journal removes its file", "[journal][tmpfs]") {
  TempDir dir("/dev/shm");
  OpenArgs args("tmpfs", dir.path() + "/journal");
  Journal::create("tmpfs", args, 1 << 20);
  Journal::destroy("tmpfs", args);
  struct stat st;
  CHECK(::stat(args.path().c_str(), &st) != 0);
  Journal::destroy("tmpfs", args);  // already gone: still fine
}

TEST_CASE("seek_data finds where a preallocated tmpfs file was written and its trailing hole",
          "[journal][tmpfs]") {
  // What replay's search past the log relies on to skip the never-written
  // ring of a tmpfs journal (reserved with fallocate, read as zeros).
  TempDir dir("/dev/shm");
  std::string path = dir.path() + "/sparse";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  const uint64_t size = 8 << 20;
  REQUIRE(::posix_fallocate(fd, 0, off_t(size)) == 0);
  REQUIRE(::pwrite(fd, "x", 1, 1 << 20) == 1);
  CHECK(strata::journal::seek_data(fd, 0, size) == 1 << 20);
  CHECK(strata::journal::seek_data(fd, (1 << 20) + 4096, size) == size);
  CHECK(strata::journal::seek_data(fd, size, size) == size);
  ::close(fd);
}
