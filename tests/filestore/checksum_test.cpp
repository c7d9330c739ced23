// Checksums of data at rest: every read verifies the blocks it touches, and
// damage done behind the store's back (bytes overwritten in place, a data
// file cut short or unlinked) reads as EIO, never as bytes.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "store_harness.h"

using namespace strata::test;
namespace fs = std::filesystem;

namespace {

std::string backend_under_test() { return GENERATE(as<std::string>{}, "xfs", "btrfs"); }

std::vector<fs::path> data_files(const TestStore &s) {
  std::vector<fs::path> files;
  for (const auto &e : fs::recursive_directory_iterator(s.live_dir() + "/data"))
    if (e.is_regular_file()) files.push_back(e.path());
  return files;
}

// The data file of the only object in the store.
fs::path only_data_file(const TestStore &s) {
  std::vector<fs::path> files = data_files(s);
  REQUIRE(files.size() == 1);
  return files[0];
}

// Overwrites `len` bytes at `offset` of the file in place, as a failing disk
// or a stray writer would.
void scribble(const fs::path &file, uint64_t offset, size_t len) {
  int fd = ::open(file.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  std::string junk(len, '\xa5');
  REQUIRE(::pwrite(fd, junk.data(), len, static_cast<off_t>(offset)) == static_cast<ssize_t>(len));
  ::close(fd);
}

int64_t read_rc(TestStore &s, std::string_view o, uint64_t off, uint64_t len) {
  std::string buf(len, '\0');
  return s.read_raw("c", o, off, len, buf.data());
}

}  // namespace

TEST_CASE("the filestore backends advertise data checksums") {
  TestStore s(backend_under_test());
  CHECK((s.capabilities() & STRATA_OS_CAP_DATA_CHECKSUMS) != 0);
}

TEST_CASE("bytes overwritten in place in a data file read as EIO, other blocks and objects fine") {
  TestStore s(backend_under_test());
  const size_t size = GENERATE(size_t{64} << 10, size_t{2} << 20);
  const std::string victim = pattern(size, 1), bystander = pattern(size, 2);
  s.apply(Txn(1).mkcoll("c").write_full("c", "victim", victim));
  const fs::path file = only_data_file(s);
  s.apply(Txn(2).write_full("c", "bystander", bystander));

  scribble(file, 5000, 19);  // inside block 1 (bytes 4096..8192)
  // ABI 1.3: the count the log reports, asked through the control call.
  auto failures = [&] {
    uint64_t n = UINT64_MAX;
    strata_err err{};
    REQUIRE(s.ops().control(s.handle(), STRATA_OS_CTL_CHECKSUM_FAILURES, &n, &err) == 0);
    return n;
  };
  CHECK(failures() == 0);

  CHECK(read_rc(s, "victim", 0, size) == -EIO);
  CHECK(failures() == 1);
  CHECK(read_rc(s, "victim", 4096, 4096) == -EIO);
  CHECK(read_rc(s, "victim", 4999, 1) == -EIO);  // a byte the scribble left alone
  CHECK(s.log().contains("victim"));
  CHECK(s.log().contains("block 1 (bytes 4096..8192)"));
  CHECK(s.log().contains("1 checksum failure"));
  CHECK(s.read("c", "victim", 0, 4096) == victim.substr(0, 4096));
  CHECK(s.read("c", "victim", 8192, size - 8192) == victim.substr(8192));
  CHECK(s.read("c", "bystander") == bystander);
  CHECK(failures() == 3);
}

TEST_CASE("a read never hands out the bytes of a block that failed its checksum") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c").write_full("c", "o", pattern(16384, 3)));
  scribble(only_data_file(s), 4096, 19);
  std::string buf(16384, 'z');
  CHECK(s.read_raw("c", "o", 0, buf.size(), buf.data()) == -EIO);
  CHECK(buf.find('\xa5') == std::string::npos);
}

TEST_CASE("a data file cut short behind the store's back reads as EIO") {
  TestStore s(backend_under_test());
  const std::string data = pattern(64 << 10, 4);
  s.apply(Txn(1).mkcoll("c").write_full("c", "o", data));
  fs::resize_file(only_data_file(s), 10000);
  CHECK(read_rc(s, "o", 0, data.size()) == -EIO);
  CHECK(read_rc(s, "o", 32768, 4096) == -EIO);  // wholly past the cut: would read as zeros
  CHECK(s.log().contains("ends at byte"));
  CHECK(s.read("c", "o", 0, 8192) == data.substr(0, 8192));
}

TEST_CASE("a data file unlinked under the running store reads as EIO, also after a restart") {
  TestStore s(backend_under_test());
  const std::string data = pattern(20000, 5);
  s.apply(Txn(1).mkcoll("c").write_full("c", "o", data));
  s.checkpoint(1);
  REQUIRE(s.read("c", "o") == data);  // its descriptor is cached now
  fs::remove(only_data_file(s));
  CHECK(read_rc(s, "o", 0, data.size()) == -EIO);
  CHECK(s.log().contains("was deleted under the running store"));
  s.reopen();
  if (s.backend() == "xfs") {
    CHECK(read_rc(s, "o", 0, data.size()) == -EIO);
    CHECK(s.log().contains("is missing"));
  } else {
    // btrfs rolls back to its last snapshot at open, which still has the file.
    CHECK(s.read("c", "o") == data);
  }
}

TEST_CASE("a write into part of a corrupt block is applied but never blesses the bad bytes") {
  TestStore s(backend_under_test());
  const std::string data = pattern(16384, 6);
  s.apply(Txn(1).mkcoll("c").write_full("c", "o", data));
  s.checkpoint(1);
  scribble(only_data_file(s), 4100, 19);

  // The write was acknowledged when it was journaled: applying it must not
  // fail (that would stop the store), and the block must stay unreadable.
  std::string err;
  CHECK(s.try_apply(Txn(2).write("c", "o", 4096 + 1000, "partial"), &err) == 0);
  CHECK(read_rc(s, "o", 4096, 100) == -EIO);
  CHECK(read_rc(s, "o", 4096 + 1000, 7) == -EIO);
  CHECK(s.read("c", "o", 0, 4096) == data.substr(0, 4096));
  CHECK(s.read("c", "o", 8192, 4096) == data.substr(8192, 4096));
  // A whole-block rewrite (what read repair does) makes it readable again.
  s.apply(Txn(3).write("c", "o", 4096, data.substr(4096, 4096)));
  CHECK(s.read("c", "o") == data);
}

TEST_CASE("rewriting a corrupt block whole repairs it") {
  TestStore s(backend_under_test());
  const std::string data = pattern(16384, 7);
  s.apply(Txn(1).mkcoll("c").write_full("c", "o", data));
  scribble(only_data_file(s), 4100, 19);
  REQUIRE(read_rc(s, "o", 0, data.size()) == -EIO);
  s.apply(Txn(2).write("c", "o", 4096, data.substr(4096, 4096)));
  CHECK(s.read("c", "o") == data);
}

TEST_CASE("every kind of data change keeps the checksums right, across a restart") {
  TestStore s(backend_under_test());
  std::string model = pattern(10000, 8);
  s.apply(Txn(1).mkcoll("c").write_full("c", "o", model));
  // Unaligned overwrite across a block boundary, then an append past the end.
  s.apply(Txn(2).write("c", "o", 4000, pattern(300, 9)).write("c", "o", 10000, pattern(5000, 10)));
  model.replace(4000, 300, pattern(300, 9));
  model += pattern(5000, 10);
  // Truncate into the middle of a block, zero part of two blocks, grow.
  s.apply(Txn(3).truncate("c", "o", 13001).zero("c", "o", 3000, 2000).truncate("c", "o", 20000));
  model.resize(13001);
  model.replace(3000, 2000, std::string(2000, '\0'));
  model.resize(20000, '\0');
  // A write into the grown zeros, a clone, then the source changes.
  s.apply(Txn(4).write("c", "o", 17000, "tail").clone("c", "o", "copy"));
  model.replace(17000, 4, "tail");
  const std::string copy = model;
  s.apply(Txn(5).write("c", "o", 1, "after the clone"));
  model.replace(1, 15, "after the clone");
  // A staged write replaces another object's data.
  const std::string staged = pattern(300000, 11);
  uint64_t id = s.stage(staged);
  s.apply(Txn(6).write_staged("c", "big", id, staged.size()));
  s.checkpoint(6);

  CHECK(s.read("c", "o") == model);
  CHECK(s.read("c", "copy") == copy);
  CHECK(s.read("c", "big") == staged);
  CHECK(s.read("c", "o", 4001, 5) == model.substr(4001, 5));
  CHECK(s.fsck() == 0);
  s.reopen();
  CHECK(s.read("c", "o") == model);
  CHECK(s.read("c", "copy") == copy);
  CHECK(s.read("c", "big") == staged);
}

TEST_CASE("a staged write replayed after a restart gets checksums of the staged bytes") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c"));
  s.checkpoint(1);
  const std::string staged = pattern(100000, 12);
  uint64_t id = s.stage(staged);
  s.apply(Txn(2).write_staged("c", "o", id, staged.size()));
  s.close();  // no checkpoint: the host replays transaction 2
  s.open();
  s.apply(Txn(2).write_staged("c", "o", id, staged.size()));
  s.checkpoint(2);
  CHECK(s.read("c", "o") == staged);
  CHECK(s.fsck() == 0);
}

TEST_CASE("fsck names the objects whose blocks fail their checksum") {
  TestStore s(backend_under_test());
  s.apply(Txn(1).mkcoll("c").write_full("c", "victim", pattern(40000, 13)));
  const fs::path file = only_data_file(s);
  s.apply(Txn(2).write_full("c", "fine", pattern(40000, 14)));
  s.checkpoint(2);
  scribble(file, 33000, 19);
  CHECK(s.fsck() == 1);
  CHECK(s.log().contains("'victim'"));
  CHECK(s.log().contains("block 8 (bytes 32768..36864)"));
}
