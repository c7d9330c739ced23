// FileData against a real cluster (`strata up`, one OSD, kv backend):
// random writes/reads/truncates/zeros agree with an in-memory model file,
// and what was flushed reads back through a fresh instance; holes, object
// removal by truncate, inline files, read-ahead, and a full pool.
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data_test_support.h"
#include "strata/client.h"

using namespace datatest;
using strata::fuse::FileData;
using strata::fuse::FileDataOptions;
using strata::fuse::FileLayout;
using strata::fuse::InlineOutcome;
using strata::testing::ProcessCluster;

namespace {

constexpr uint32_t kObj = 64u << 10;  // small objects: ranges cross them often

FileLayout layout_of(const Pool &p, uint64_t ino) {
  FileLayout f;
  f.ino = ino;
  f.pool = p.id;
  f.object_size = kObj;
  return f;
}

// Small buffers, so write-outs happen in the middle of the sequence.
FileDataOptions small_buffers() {
  FileDataOptions o;
  o.writeback_bytes_per_file = 192u << 10;
  o.writeback_bytes_total = 512u << 10;
  o.readahead_max_bytes = 512u << 10;
  o.max_inflight_ops = 8;
  return o;
}

std::string read_all(FileData &fd, const FileLayout &f, uint64_t size) {
  std::string out(size, 'X');
  int64_t n = fd.read(f, size, 0, size, out.data());
  REQUIRE(n == static_cast<int64_t>(size));
  return out;
}

}  // namespace

TEST_CASE("data: random writes, reads, truncates and zeros match a model file", "[fuse][data]") {
  ProcessCluster &c = shared_cluster();
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-model");
  const FileLayout f = layout_of(p, 0x1001);
  std::string model;
  std::mt19937 rng(7);
  constexpr uint64_t kSpan = 20 * kObj;  // offsets up to 1.25 MiB
  uint64_t max_size = 0;
  {
    auto fd = make_file_data(p, small_buffers());
    for (int i = 0; i < 2000; ++i) {
      const int what = rng() % 100;
      const uint64_t off = rng() % kSpan;
      const size_t len = 1 + rng() % (what < 50 ? 3 * kObj / 2 : 3 * kObj);
      INFO("op " << i << " kind " << what << " off " << off << " len " << len << " size "
                 << model.size());
      if (what < 45) {
        std::string data = pattern(len, i);
        REQUIRE(fd->write(f, off, data.data(), len) == static_cast<int64_t>(len));
        if (model.size() < off + len) model.resize(off + len, '\0');
        model.replace(off, len, data);
      } else if (what < 80) {
        std::string out(len, 'X');
        int64_t n = fd->read(f, model.size(), off, len, out.data());
        const uint64_t want = off >= model.size() ? 0 : std::min<uint64_t>(len, model.size() - off);
        REQUIRE(n == static_cast<int64_t>(want));
        REQUIRE(first_difference(out.substr(0, want),
                                 model.substr(off < model.size() ? off : 0, want)) == -1);
      } else if (what < 88) {
        const uint64_t new_size = rng() % kSpan;
        REQUIRE(fd->truncate(f, model.size(), new_size) == 0);
        model.resize(new_size, '\0');
      } else if (what < 95) {
        REQUIRE(fd->zero(f, off, len) == 0);
        if (off < model.size()) {
          const uint64_t n = std::min<uint64_t>(len, model.size() - off);
          std::fill(model.begin() + off, model.begin() + off + n, '\0');
        }
      } else if (what < 98) {
        REQUIRE(fd->flush(f) == 0);
        REQUIRE(fd->stats().writeback_bytes == 0);
      } else {
        fd->invalidate(f.ino);
      }
      max_size = std::max<uint64_t>(max_size, model.size());
    }
    REQUIRE(fd->flush(f) == 0);
    const auto s = fd->stats();
    CHECK(s.object_writes > 0);
    CHECK(s.object_removes > 0);
    CHECK(s.writeback_bytes == 0);
    // st_blocks: never less than the bytes the file holds that aren't holes.
    const size_t data_bytes = model.size() - std::count(model.begin(), model.end(), '\0');
    CHECK(fd->allocated_blocks(f, model.size()) * 512 >= static_cast<int64_t>(data_bytes));
    fd->forget(f.ino);
  }
  // A fresh instance (nothing buffered, nothing cached) reads the objects.
  auto fresh = make_file_data(p);
  CHECK(first_difference(read_all(*fresh, f, model.size()), model) == -1);
  // Nothing lies past the size: objects past it were removed or trimmed.
  for (uint64_t n = (model.size() + kObj - 1) / kObj; n * kObj < max_size + kObj; ++n)
    CHECK_FALSE(object_exists(p, f.ino, n));
  if (model.size() % kObj != 0) {
    uint64_t sz = 0;
    if (object_exists(p, f.ino, model.size() / kObj, &sz)) CHECK(sz <= model.size() % kObj);
  }
  fresh.reset();
  close_pool(p);
}

TEST_CASE("data: holes read as zeros and truncate removes the objects past the size",
          "[fuse][data]") {
  ProcessCluster &c = shared_cluster();
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-sparse");
  const FileLayout f = layout_of(p, 0xabc);
  auto fd = make_file_data(p);
  const std::string head = pattern(1000, 1), tail = pattern(kObj + 10, 2);
  const uint64_t tail_off = 10 * kObj - 5;  // crosses objects 9, 10, 11
  const uint64_t size = tail_off + tail.size();
  REQUIRE(fd->write(f, 0, head.data(), head.size()) == int64_t(head.size()));
  REQUIRE(fd->write(f, tail_off, tail.data(), tail.size()) == int64_t(tail.size()));
  // Before the flush the buffer serves the reads, holes included.
  std::string expect(size, '\0');
  expect.replace(0, head.size(), head);
  expect.replace(tail_off, tail.size(), tail);
  CHECK(first_difference(read_all(*fd, f, size), expect) == -1);
  REQUIRE(fd->flush(f) == 0);
  CHECK(object_exists(p, f.ino, 0));
  for (uint64_t n = 1; n < 9; ++n) CHECK_FALSE(object_exists(p, f.ino, n));
  CHECK(object_exists(p, f.ino, 9));
  CHECK(object_exists(p, f.ino, 11));
  auto fresh = make_file_data(p);
  CHECK(first_difference(read_all(*fresh, f, size), expect) == -1);
  // Reads stop at the size.
  std::string out(100, 'X');
  CHECK(fresh->read(f, size, size - 10, 100, out.data()) == 10);
  CHECK(fresh->read(f, size, size + 10, 100, out.data()) == 0);
  // Sparse: far fewer blocks than the size.
  const int64_t blocks = fresh->allocated_blocks(f, size);
  CHECK(blocks * 512 >= int64_t(head.size() + tail.size()));
  CHECK(blocks * 512 < int64_t(size / 2));

  // Truncate into object 9: 10 and 11 go, 9 is trimmed.
  const uint64_t cut = 9 * kObj + 100;
  REQUIRE(fd->truncate(f, size, cut) == 0);
  CHECK_FALSE(object_exists(p, f.ino, 10));
  CHECK_FALSE(object_exists(p, f.ino, 11));
  uint64_t sz = 0;
  REQUIRE(object_exists(p, f.ino, 9, &sz));
  CHECK(sz == 100);
  // Growing again reads zeros past the cut.
  expect.resize(cut);
  expect.resize(size, '\0');
  fresh->invalidate(f.ino);
  CHECK(first_difference(read_all(*fresh, f, size), expect) == -1);
  // Truncate to an object boundary removes that object and keeps none trimmed.
  REQUIRE(fd->truncate(f, size, 0) == 0);
  CHECK_FALSE(object_exists(p, f.ino, 0));
  CHECK_FALSE(object_exists(p, f.ino, 9));

  // zero(): whole objects removed, partial ones zeroed.
  const std::string full = pattern(4 * kObj, 3);
  REQUIRE(fd->write(f, 0, full.data(), full.size()) == int64_t(full.size()));
  REQUIRE(fd->flush(f) == 0);
  REQUIRE(fd->zero(f, kObj / 2, 2 * kObj) == 0);  // half of 0, all of 1, half of 2
  CHECK(object_exists(p, f.ino, 0));
  CHECK_FALSE(object_exists(p, f.ino, 1));
  CHECK(object_exists(p, f.ino, 2));
  std::string zeroed = full;
  std::fill(zeroed.begin() + kObj / 2, zeroed.begin() + kObj / 2 + 2 * kObj, '\0');
  fresh->invalidate(f.ino);
  CHECK(first_difference(read_all(*fresh, f, full.size()), zeroed) == -1);
  fd.reset();
  fresh.reset();
  close_pool(p);
}

TEST_CASE("data: an inline file changes without objects until it outgrows being inline",
          "[fuse][data]") {
  ProcessCluster &c = shared_cluster();
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-inline");
  auto fd = make_file_data(p, small_buffers());
  FileLayout f = layout_of(p, 0x2001);
  f.inline_data = std::make_shared<const std::string>("hello");
  // Its bytes, then zeros up to the size.
  std::string expect = "hello";
  expect.resize(100, '\0');
  CHECK(read_all(*fd, f, 100) == expect);
  // Writes, a truncate and a zeroed range change it in memory only; a
  // flush leaves its bytes for settle_inline.
  REQUIRE(fd->write(f, 3, "LOWORLD", 7) == 7);
  REQUIRE(fd->truncate(f, 100, 8) == 0);
  REQUIRE(fd->zero(f, 1, 2) == 0);
  const std::string model("h\0\0LOWOR", 8);
  CHECK(read_all(*fd, f, 8) == model);
  // Changed bytes not yet reported: a close must go through settle_inline,
  // so its state is not dropped on the spot.
  CHECK_FALSE(fd->forget_if_idle(f.ino));
  REQUIRE(fd->flush(f) == 0);
  CHECK_FALSE(object_exists(p, f.ino, 0));
  CHECK(fd->allocated_blocks(f, 8) == 1);
  std::string bytes;
  REQUIRE(fd->settle_inline(f, 8, 4096, &bytes) == InlineOutcome::kInline);
  CHECK(bytes == model);
  CHECK(fd->settle_inline(f, 8, 4096, &bytes) == InlineOutcome::kUnchanged);
  // Zeros at the end are not kept (they read the same).
  REQUIRE(fd->write(f, 8, "\0\0\0", 3) == 3);
  REQUIRE(fd->settle_inline(f, 11, 4096, &bytes) == InlineOutcome::kInline);
  CHECK(bytes == model);
  // Reported and not changed since: it stays where it is, whatever the limit.
  CHECK(fd->settle_inline(f, 11, 0, &bytes) == InlineOutcome::kUnchanged);

  // Past the limit: into objects, which then hold every byte.
  const std::string more = pattern(10000, 5);
  REQUIRE(fd->write(f, 11, more.data(), more.size()) == int64_t(more.size()));
  const uint64_t size = 11 + more.size();
  REQUIRE(fd->settle_inline(f, size, 4096, &bytes) == InlineOutcome::kObjects);
  REQUIRE(fd->flush(f) == 0);
  CHECK(fd->settle_inline(f, size, 4096, &bytes) == InlineOutcome::kUnchanged);
  CHECK(object_exists(p, f.ino, 0));
  std::string whole = model + std::string(3, '\0') + more;
  auto fresh = make_file_data(p);
  CHECK(first_difference(read_all(*fresh, layout_of(p, f.ino), size), whole) == -1);
  CHECK(first_difference(read_all(*fd, f, size), whole) == -1);

  // Outgrowing the write-back buffer moves a file to objects by itself.
  FileLayout g = layout_of(p, 0x2002);
  g.inline_data = std::make_shared<const std::string>("x");
  const std::string huge = pattern(400u << 10, 6);
  REQUIRE(fd->write(g, 1, huge.data(), huge.size()) == int64_t(huge.size()));
  REQUIRE(fd->flush(g) == 0);
  REQUIRE(fd->settle_inline(g, 1 + huge.size(), 4096, &bytes) == InlineOutcome::kObjects);
  CHECK(first_difference(read_all(*fresh, layout_of(p, g.ino), 1 + huge.size()), "x" + huge) == -1);

  // After an invalidation (a revoke) the next caller's bytes count.
  FileLayout h = layout_of(p, 0x2003);
  h.inline_data = std::make_shared<const std::string>("one");
  CHECK(read_all(*fd, h, 3) == "one");
  // Only read: a close drops its state at once (no worker, no wait), and
  // the next reader starts from the inode's bytes again.
  CHECK(fd->forget_if_idle(h.ino));
  CHECK(fd->forget_if_idle(h.ino));
  CHECK(read_all(*fd, h, 3) == "one");
  fd->invalidate(h.ino);
  h.inline_data = std::make_shared<const std::string>("two");
  CHECK(read_all(*fd, h, 3) == "two");
  fd.reset();
  fresh.reset();
  close_pool(p);
}

TEST_CASE("data: a write racing forget() of its file is never lost", "[fuse][data]") {
  ProcessCluster &c = shared_cluster();
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-forget-race");
  auto fd = make_file_data(p);
  FileLayout f = layout_of(p, 0x3001);
  f.inline_data = std::make_shared<const std::string>();
  // The close of an earlier opener forgets the file (its state is clean)
  // while the next opener writes: the write must land in a state a later
  // settle or flush finds, not in one forget() just dropped. Inline, so
  // that the loop does no I/O and runs often enough to meet the race.
  std::atomic<bool> stop{false};
  std::thread closer([&] {
    while (!stop) fd->forget(f.ino);
  });
  int lost = 0;
  for (int i = 0; i < 200000 && lost == 0; ++i) {
    const char byte = char('a' + i % 26);
    REQUIRE(fd->write(f, 0, &byte, 1) == 1);
    std::string bytes;
    if (fd->settle_inline(f, 1, 4096, &bytes) != InlineOutcome::kInline ||
        bytes != std::string(1, byte))
      ++lost;
    f.inline_data = std::make_shared<const std::string>(bytes);
  }
  stop = true;
  closer.join();
  CHECK(lost == 0);
  fd.reset();
  close_pool(p);
}

TEST_CASE("data: a sequential reader is served from read-ahead", "[fuse][data]") {
  ProcessCluster &c = shared_cluster();
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-readahead");
  const FileLayout f = layout_of(p, 0x77);
  const std::string content = pattern(3u << 20, 9);  // 48 objects
  {
    auto w = make_file_data(p);
    REQUIRE(w->write(f, 0, content.data(), content.size()) == int64_t(content.size()));
    REQUIRE(w->flush(f) == 0);
  }
  FileDataOptions o;
  o.readahead_max_bytes = 1u << 20;
  auto r = make_file_data(p, o);
  std::string got;
  constexpr size_t kChunk = 32u << 10;
  for (uint64_t off = 0; off < content.size(); off += kChunk) {
    std::string buf(kChunk, 'X');
    int64_t n = r->read(f, content.size(), off, kChunk, buf.data());
    REQUIRE(n == int64_t(std::min<uint64_t>(kChunk, content.size() - off)));
    got.append(buf, 0, n);
  }
  CHECK(first_difference(got, content) == -1);
  const auto s = r->stats();
  INFO("hits " << s.readahead_hits << " object reads " << s.object_reads);
  CHECK(s.readahead_hits > content.size() / kChunk / 2);
  // No object read again by a reader that missed: each once, or in two
  // pieces where a read-ahead window starts inside it.
  CHECK(s.object_reads < content.size() / kObj * 3 / 2);
  // A write in the middle is seen over the cached copy.
  const std::string patch = pattern(5000, 10);
  REQUIRE(r->write(f, kObj - 100, patch.data(), patch.size()) == int64_t(patch.size()));
  std::string expect = content;
  expect.replace(kObj - 100, patch.size(), patch);
  CHECK(first_difference(read_all(*r, f, content.size()), expect) == -1);
  REQUIRE(r->flush(f) == 0);
  CHECK(first_difference(read_all(*r, f, content.size()), expect) == -1);
  r.reset();
  close_pool(p);
}

TEST_CASE("data: concurrent writers of one file keep every byte", "[fuse][data]") {
  ProcessCluster &c = shared_cluster();
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-threads");
  const FileLayout f = layout_of(p, 0x99);
  auto fd = make_file_data(p, small_buffers());
  constexpr int kThreads = 4;
  constexpr size_t kPart = 5 * kObj / 2;
  std::string expect;
  for (int t = 0; t < kThreads; ++t) expect += pattern(kPart, 100 + t);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (size_t o = 0; o < kPart; o += 4096) {
        const size_t n = std::min<size_t>(4096, kPart - o);
        fd->write(f, t * kPart + o, expect.data() + t * kPart + o, n);
      }
    });
  for (auto &t : threads) t.join();
  REQUIRE(fd->flush(f) == 0);
  auto fresh = make_file_data(p);
  CHECK(first_difference(read_all(*fresh, f, expect.size()), expect) == -1);
  fd.reset();
  fresh.reset();
  close_pool(p);
}

TEST_CASE("data: a full pool fails writes with ENOSPC instead of hanging", "[fuse][data]") {
  // Every OSD counts as full: its disk is past a failsafe ratio of almost 0.
  ProcessCluster c(1, {"osd_failsafe_full_ratio=0.000001"});
  REQUIRE_CLUSTER(c);
  Pool p = make_pool(c, "data-full");
  const FileLayout f = layout_of(p, 0x5);
  // Each failure is told (which object, why), a few per second at most.
  std::mutex told_m;
  std::vector<std::string> told;
  FileDataOptions opts = small_buffers();
  opts.on_error = [&](const std::string &line) {
    std::lock_guard lk(told_m);
    told.push_back(line);
  };
  auto fd = make_file_data(p, opts);
  const std::string data = pattern(100000, 4);
  // Buffered: accepted, then the write-out fails and flush says so, once.
  REQUIRE(fd->write(f, 0, data.data(), 1000) == 1000);
  CHECK(fd->flush(f) == -ENOSPC);
  CHECK(fd->flush(f) == 0);
  // Writers past the buffer bound learn it from write() too.
  int64_t rc = 0;
  for (int i = 0; i < 50 && rc >= 0; ++i)
    rc = fd->write(f, uint64_t(i) * data.size(), data.data(), data.size());
  CHECK(rc == -ENOSPC);
  CHECK(fd->flush(f) == -ENOSPC);
  CHECK(fd->stats().writeback_bytes == 0);
  CHECK(fd->stats().object_errors >= 2);
  {
    std::lock_guard lk(told_m);
    REQUIRE(!told.empty());
    CHECK(told.size() <= fd->stats().object_errors);
    CHECK(told[0].find("object write of 0000000000000005.00000000 failed") == 0);
    CHECK(told[0].find(std::strerror(ENOSPC)) != std::string::npos);
  }
  // Removing still works on a full pool (frees space).
  CHECK(fd->truncate(f, 50 * data.size(), 0) == 0);
  fd.reset();
  close_pool(p);
}
