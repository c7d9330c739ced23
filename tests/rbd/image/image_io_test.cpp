// An open image's I/O against a real cluster: object boundaries, holes,
// discard, extents, flush, read-ahead.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstring>
#include <future>
#include <random>
#include <thread>

#include "image_test_support.h"
#include "strata/client.h"

using namespace imagetest;
using strata::rbd::Extent;
using strata::rbd::OpenOptions;

namespace {
constexpr uint32_t kObj = 65536;
}

TEST_CASE("random writes, discards and zeroes across objects read back like a model",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_model");
  const uint64_t size = 16 * kObj + 12345;  // the last object is partial
  p.store->create("m", {size, kObj});
  auto img = p.open("m");
  CHECK(img->size() == size);
  CHECK_FALSE(img->read_only());
  CHECK(img->describe() == "io_model/m");
  std::string model(size, '\0');
  std::mt19937 rng(42);
  for (int i = 0; i < 250; ++i) {
    const uint64_t off = rng() % size;
    const uint64_t len = 1 + rng() % std::min<uint64_t>(size - off, 3 * kObj);
    const int kind = static_cast<int>(rng() % 10);
    INFO("op " << i << " kind " << kind << " at " << off << " len " << len);
    if (kind < 5) {
      const std::string d = pattern(len, i);
      REQUIRE(write_sync(*img, off, d) == 0);
      model.replace(off, len, d);
    } else if (kind < 7) {
      REQUIRE(discard_sync(*img, off, len) == 0);
      model.replace(off, len, std::string(len, '\0'));
    } else if (kind < 8) {
      REQUIRE(zeroes_sync(*img, off, len) == 0);
      model.replace(off, len, std::string(len, '\0'));
    } else {
      std::string got;
      REQUIRE(read_sync(*img, off, len, &got) == 0);
      REQUIRE(first_difference(got, model.substr(off, len)) == -1);
    }
  }
  // Non-overlapping writes in parallel, then everything once more.
  std::vector<std::string> bufs;
  std::vector<std::future<int>> results;
  for (uint64_t i = 0; i < 12; ++i) bufs.push_back(pattern(kObj + 77, 1000 + i));
  for (uint64_t i = 0; i < 12; ++i) {
    auto pr = std::make_shared<std::promise<int>>();
    results.push_back(pr->get_future());
    const uint64_t off = i * (kObj + 100) + 5;
    model.replace(off, bufs[i].size(), bufs[i]);
    img->write(off, bufs[i].size(), bufs[i].data(), false, [pr](int rc) { pr->set_value(rc); });
  }
  for (auto &r : results) CHECK(r.get() == 0);
  CHECK(flush_sync(*img) == 0);
  std::string all;
  REQUIRE(read_sync(*img, 0, size, &all) == 0);
  CHECK(first_difference(all, model) == -1);
  REQUIRE(img->close() == 0);
  // And from a fresh open.
  auto again = p.open("m", read_only_opts());
  REQUIRE(read_sync(*again, 0, size, &all) == 0);
  CHECK(first_difference(all, model) == -1);
  const auto st = again->stats();
  CHECK(st.reads == 1);
  CHECK(st.bytes_read == size);
}

TEST_CASE("holes read as zeros, discard frees whole objects and zeroes never create any",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_discard");
  p.store->create("d", {8 * kObj, kObj});
  auto img = p.open("d");
  std::string got;
  REQUIRE(read_sync(*img, 0, 8 * kObj, &got) == 0);
  CHECK(got == std::string(8 * kObj, '\0'));
  CHECK(p.store->du("d") == 0);

  REQUIRE(write_sync(*img, 0, pattern(4 * kObj, 3)) == 0);
  CHECK(p.store->du("d") == 4 * kObj);
  // Objects 1 and 2 wholly inside: gone; object 0's tail and 3's head zeroed.
  REQUIRE(discard_sync(*img, kObj - 100, 2 * kObj + 200) == 0);
  CHECK(p.object_exists(p.data_oid("d", 0)));
  CHECK_FALSE(p.object_exists(p.data_oid("d", 1)));
  CHECK_FALSE(p.object_exists(p.data_oid("d", 2)));
  CHECK(p.object_exists(p.data_oid("d", 3)));
  CHECK(p.store->du("d") == 2 * kObj);
  REQUIRE(read_sync(*img, kObj - 200, 2 * kObj + 400, &got) == 0);
  const std::string orig = pattern(4 * kObj, 3);
  CHECK(got.substr(0, 100) == orig.substr(kObj - 200, 100));
  CHECK(got.substr(100, 2 * kObj + 200) == std::string(2 * kObj + 200, '\0'));
  CHECK(got.substr(2 * kObj + 300) == orig.substr(3 * kObj + 100, 100));

  // Zeroing (and discarding) part of a hole creates nothing.
  REQUIRE(zeroes_sync(*img, 5 * kObj + 10, 100) == 0);
  REQUIRE(discard_sync(*img, 6 * kObj + 10, kObj) == 0);
  CHECK_FALSE(p.object_exists(p.data_oid("d", 5)));
  CHECK_FALSE(p.object_exists(p.data_oid("d", 6)));
  CHECK_FALSE(p.object_exists(p.data_oid("d", 7)));
  const auto st = img->stats();
  CHECK(st.discards == 2);
  CHECK(st.zeroes == 1);
}

TEST_CASE("extents report data and holes per object, merged", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_extents");
  p.store->create("e", {6 * kObj, kObj});
  auto img = p.open("e");
  REQUIRE(write_sync(*img, 10, "x") == 0);
  REQUIRE(write_sync(*img, kObj + 5, "y") == 0);
  REQUIRE(write_sync(*img, 4 * kObj, "z") == 0);
  std::vector<Extent> ex;
  REQUIRE(img->extents(100, 6 * kObj - 100, &ex) == 0);
  REQUIRE(ex.size() == 4);
  CHECK(ex[0].offset == 100);
  CHECK(ex[0].length == 2 * kObj - 100);
  CHECK_FALSE(ex[0].hole);
  CHECK(ex[1].offset == 2 * kObj);
  CHECK(ex[1].length == 2 * kObj);
  CHECK(ex[1].hole);
  CHECK(ex[1].zero);
  CHECK(ex[2].offset == 4 * kObj);
  CHECK(ex[2].length == kObj);
  CHECK_FALSE(ex[2].hole);
  CHECK(ex[3].hole);
  CHECK(ex[3].offset + ex[3].length == 6 * kObj);
  CHECK(img->extents(0, 7 * kObj, &ex) == -EINVAL);
}

TEST_CASE("flush waits for the writes started before it and reports their first error once",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_flush");
  p.store->create("f", {32 * kObj, kObj});
  auto img = p.open("f");
  std::atomic<int> done{0};
  const std::string data = pattern(2 * kObj, 9);
  for (int i = 0; i < 16; ++i)
    img->write(static_cast<uint64_t>(i) * 2 * kObj, data.size(), data.data(), false,
               [&](int rc) {
                 CHECK(rc == 0);
                 ++done;
               });
  int seen_at_flush = -1;
  auto pr = std::make_shared<std::promise<int>>();
  img->flush([&, pr](int rc) {
    seen_at_flush = done.load();
    pr->set_value(rc);
  });
  CHECK(pr->get_future().get() == 0);
  CHECK(seen_at_flush == 16);

  // The pool goes away under the open image: writes fail, the next flush
  // reports it, the one after (nothing written since) does not.
  strata_cluster_t other = shared_cluster().connect();
  REQUIRE(strata_pool_delete(other, "io_flush") == 0);
  strata_cluster_shutdown(other);
  const int wrc = write_sync(*img, 0, "after");
  CHECK(wrc < 0);
  CHECK(flush_sync(*img) == wrc);
  CHECK(flush_sync(*img) == 0);
  CHECK(img->stats().errors >= 1);
  CHECK(img->last_error().find("io_flush/f") != std::string::npos);
  CHECK(img->close() == wrc);
}

TEST_CASE("read-ahead serves sequential readers from prefetched data", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_readahead");
  const uint64_t size = 40 * kObj;
  p.store->create("ra", {size, kObj});
  const std::string data = pattern(size, 11);
  {
    auto img = p.open("ra");
    REQUIRE(write_sync(*img, 0, data) == 0);
    REQUIRE(img->close() == 0);
  }
  OpenOptions o;
  o.read_only = true;
  o.readahead_max_bytes = 1 << 20;
  auto img = p.open("ra", o);
  const uint64_t chunk = 128 << 10;
  std::string got;
  for (uint64_t off = 0; off < size; off += chunk) {
    REQUIRE(read_sync(*img, off, chunk, &got) == 0);
    REQUIRE(first_difference(got, data.substr(off, chunk)) == -1);
  }
  const auto st = img->stats();
  CHECK(st.readahead_hits > 10);
  CHECK(st.readahead_bytes > 0);

  // Without read-ahead nothing is served from it.
  o.readahead_max_bytes = 0;
  auto plain = p.open("ra", o);
  for (uint64_t off = 0; off < 8 * chunk; off += chunk) REQUIRE(read_sync(*plain, off, chunk, &got) == 0);
  CHECK(plain->stats().readahead_hits == 0);
}

TEST_CASE("a write during read-ahead never leaves stale data to read", "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_ra_write");
  const uint64_t size = 64 * kObj;
  p.store->create("w", {size, kObj});
  std::string model = pattern(size, 21);
  OpenOptions o;
  o.readahead_max_bytes = 2 << 20;
  auto img = p.open("w", o);
  REQUIRE(write_sync(*img, 0, model) == 0);
  const uint64_t chunk = 32 << 10;
  std::string got;
  std::mt19937 rng(5);
  for (uint64_t off = 0; off + chunk <= size; off += chunk) {
    REQUIRE(read_sync(*img, off, chunk, &got) == 0);
    INFO("read at " << off);
    REQUIRE(first_difference(got, model.substr(off, chunk)) == -1);
    // Every few reads, overwrite a range ahead of the reader (likely
    // prefetched or being prefetched), racing with the next read.
    if ((off / chunk) % 3 == 1) {
      const uint64_t woff = off + chunk + rng() % (4 * chunk);
      const uint64_t wlen = std::min<uint64_t>(1 + rng() % (2 * chunk), size - woff);
      if (woff >= size) continue;
      const std::string d = pattern(wlen, static_cast<uint32_t>(off));
      auto pr = std::make_shared<std::promise<int>>();
      img->write(woff, wlen, d.data(), false, [pr](int rc) { pr->set_value(rc); });
      model.replace(woff, wlen, d);
      REQUIRE(pr->get_future().get() == 0);
    }
  }
  CHECK(img->stats().readahead_hits > 0);
}

TEST_CASE("with one object operation in flight at a time, requests still all complete",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_inflight");
  p.store->create("q", {20 * kObj, kObj});
  OpenOptions o;
  o.max_inflight_ops = 1;
  auto img = p.open("q", o);
  const std::string a = pattern(20 * kObj, 41), b = pattern(3 * kObj, 42);
  // Queued behind one another: a write over all objects, then an
  // overlapping-free second write and a flush.
  auto p1 = std::make_shared<std::promise<int>>(), p2 = std::make_shared<std::promise<int>>();
  img->write(0, 10 * kObj, a.data(), false, [p1](int rc) { p1->set_value(rc); });
  img->write(12 * kObj, b.size(), b.data(), false, [p2](int rc) { p2->set_value(rc); });
  CHECK(flush_sync(*img) == 0);
  CHECK(p1->get_future().get() == 0);
  CHECK(p2->get_future().get() == 0);
  std::string got;
  REQUIRE(read_sync(*img, 0, 20 * kObj, &got) == 0);
  std::string want = a.substr(0, 10 * kObj) + std::string(2 * kObj, '\0') + b +
                     std::string(5 * kObj, '\0');
  CHECK(first_difference(got, want) == -1);
  CHECK(img->stats().object_writes == 13);
}

TEST_CASE("threads reading, writing and discarding their own ranges at once stay consistent",
          "[rbd][image]") {
  REQUIRE_CLUSTER(shared_cluster());
  TestPool p("io_threads");
  const int threads = 4;
  const uint64_t region = 6 * kObj;
  p.store->create("t", {threads * region, kObj});
  OpenOptions o;
  o.readahead_max_bytes = 512 << 10;
  o.max_inflight_ops = 8;
  auto img = p.open("t", o);
  std::vector<std::string> models(threads, std::string(region, '\0'));
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::string &model = models[t];
      const uint64_t base = t * region;
      for (int i = 0; i < 60; ++i) {
        const uint64_t off = rng() % region;
        const uint64_t len = 1 + rng() % std::min<uint64_t>(region - off, kObj + kObj / 2);
        std::string got;
        switch (rng() % 4) {
          case 0: {
            const std::string d = pattern(len, t * 1000 + i);
            if (write_sync(*img, base + off, d) != 0) ++failures;
            model.replace(off, len, d);
            break;
          }
          case 1:
            if (discard_sync(*img, base + off, len) != 0) ++failures;
            model.replace(off, len, std::string(len, '\0'));
            break;
          default:
            // A short sequential run, so read-ahead kicks in.
            for (uint64_t pos = off; pos < std::min(region, off + 4 * (16u << 10)); pos += 16u << 10) {
              const uint64_t n = std::min<uint64_t>(16u << 10, region - pos);
              if (read_sync(*img, base + pos, n, &got) != 0 ||
                  got != model.substr(pos, n))
                ++failures;
            }
        }
      }
    });
  for (auto &w : workers) w.join();
  CHECK(failures == 0);
  CHECK(flush_sync(*img) == 0);
  std::string all;
  REQUIRE(read_sync(*img, 0, threads * region, &all) == 0);
  for (int t = 0; t < threads; ++t)
    CHECK(first_difference(all.substr(t * region, region), models[t]) == -1);
  REQUIRE(img->close() == 0);
}
