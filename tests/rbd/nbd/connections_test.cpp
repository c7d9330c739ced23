// Connections as a whole: many requests in flight on an asynchronous
// device, clients that leave mid-request, many idle clients, stop() with
// clients attached, limits, and the listening addresses.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "mem_device.h"
#include "nbd_protocol.h"
#include "nbd_test_client.h"
#include "strata/cpp/plugin_support.hpp"

using namespace rbdtest;
using namespace strata::rbd::nbd;

namespace {

constexpr uint64_t kSize = 8 << 20;

std::string block_of(uint64_t n, size_t len) {
  std::string s(len, '\0');
  for (size_t i = 0; i < len; ++i) s[i] = char((n * 131 + i) % 253 + 1);
  return s;
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("nbd: many requests in flight on an asynchronous device", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize, false, 4);
  strata::rbd::NbdServerOptions opts;
  opts.max_inflight_per_connection = 16;
  TestServer s(dev, opts);
  for (bool structured : {false, true}) {
    TestClient c(s.path);
    c.go("", structured);
    constexpr int kCount = 300;
    constexpr uint32_t kLen = 4096;
    // All writes go out before any reply is read: the server must keep
    // reading (up to its in-flight cap) while replies pile up.
    std::thread writer([&] {
      for (int i = 0; i < kCount; ++i)
        c.send_request(kCmdWrite, 0, 1000 + i, uint64_t(i) * kLen, kLen, block_of(i + structured, kLen));
    });
    std::map<uint64_t, int> seen;
    for (int i = 0; i < kCount; ++i) {
      uint64_t cookie;
      if (structured) {
        Chunk ch = c.read_chunk();
        CHECK(ch.type == kReplyTypeNone);
        cookie = ch.cookie;
      } else {
        SimpleReply r = c.read_simple();
        CHECK(r.error == 0);
        cookie = r.cookie;
      }
      seen[cookie]++;
    }
    writer.join();
    CHECK(seen.size() == size_t(kCount));
    for (int i = 0; i < kCount; ++i) c.send_request(kCmdRead, structured ? kCmdFlagDf : 0, 5000 + i, uint64_t(i) * kLen, kLen);
    int matched = 0;
    for (int i = 0; i < kCount; ++i) {
      uint64_t cookie;
      std::string data;
      if (structured) {
        auto chunks = c.read_structured();
        REQUIRE(chunks.size() == 1);
        cookie = chunks[0].cookie;
        data = chunks[0].payload.substr(8);
      } else {
        // Simple replies carry no length: reads are all kLen long.
        SimpleReply r = c.read_simple(kLen);
        cookie = r.cookie;
        data = r.data;
      }
      matched += data == block_of(cookie - 5000 + structured, kLen);
    }
    CHECK(matched == kCount);
  }
}

TEST_CASE("nbd: a client leaving mid-payload has its write dropped", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize, false, 2);
  TestServer s(dev);
  {
    TestClient c(s.path);
    c.go();
    c.send_request(kCmdWrite, 0, 1, 0, 65536, std::string(1000, 'x'));
  }
  TestClient c(s.path);
  c.go();
  c.send_request(kCmdRead, 0, 2, 0, 1000);
  CHECK(c.read_simple(1000).data == std::string(1000, '\0'));
  CHECK(dev->allocated_chunks() == 0);
  CHECK(s.server->stats().writes == 0);
}

TEST_CASE("nbd: a client leaving with requests in flight", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize, false, 2);
  TestServer s(dev);
  for (int round = 0; round < 5; ++round) {
    TestClient c(s.path);
    c.go("", true);
    for (int i = 0; i < 50; ++i) c.send_request(kCmdRead, 0, i, 0, 65536);
  }  // closed with up to 50 reads in flight: their replies go nowhere
  TestClient c(s.path);
  c.go();
  c.send_request(kCmdFlush, 0, 1, 0, 0);
  CHECK(c.read_simple().error == 0);
}

TEST_CASE("nbd: 100 idle connections do not stall a working one", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  TestServer s(dev);
  std::vector<std::unique_ptr<TestClient>> idle;
  for (int i = 0; i < 100; ++i) {
    idle.push_back(std::make_unique<TestClient>(s.path));
    if (i % 2) idle.back()->go();  // half negotiated, half stuck at the greeting
  }
  TestClient c(s.path);
  c.go();
  c.send_request(kCmdWrite, 0, 1, 0, 4, "abcd");
  CHECK(c.read_simple().error == 0);
  c.send_request(kCmdRead, 0, 2, 0, 4);
  CHECK(c.read_simple(4).data == "abcd");
  CHECK(s.server->stats().connections_open == 101);
}

TEST_CASE("nbd: stop() with connections open", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize, false, 2);
  auto s = std::make_unique<TestServer>(dev);
  std::string path = s->path;
  TestClient negotiated(path), greeting(path), busy(path);
  negotiated.go();
  greeting.read_greeting();
  busy.go();
  for (int i = 0; i < 20; ++i) busy.send_request(kCmdWrite, 0, i, uint64_t(i) * 4096, 4096, block_of(i, 4096));
  // Let the server read some of them.
  busy.read_simple();
  s->server->stop();
  CHECK_FALSE(exists(path));
  CHECK(negotiated.closed_by_server());
  CHECK(greeting.closed_by_server());
  // What the server had taken was answered, successfully, before it closed.
  int answered = 1, failed = 0;
  try {
    for (; answered < 20; ++answered) failed += busy.read_simple().error != 0;
  } catch (const std::runtime_error &) {  // the server closed after the last one
  }
  CHECK(failed == 0);
  CHECK(busy.closed_by_server());
  CHECK(s->server->stats().connections_open == 0);
  s.reset();
  CHECK_THROWS(TestClient(path));
}

TEST_CASE("nbd: connections beyond max_connections are closed", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  strata::rbd::NbdServerOptions opts;
  opts.max_connections = 2;
  TestServer s(dev, opts);
  TestClient a(s.path), b(s.path);
  a.go();
  b.go();
  TestClient c(s.path);
  CHECK(c.closed_by_server());
}

TEST_CASE("nbd: TCP listening and addresses", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  strata::rbd::NbdServerOptions opts;
  opts.tcp_listen = "127.0.0.1:0";
  auto server = strata::rbd::NbdServer::start({{"", "", dev}}, opts);
  std::string addr = server->bound_address();
  CHECK(addr.rfind("127.0.0.1:", 0) == 0);
  CHECK(addr != "127.0.0.1:0");
  // A second server on the same port fails, naming the address.
  opts.tcp_listen = addr;
  CHECK_THROWS_AS(strata::rbd::NbdServer::start({{"", "", dev}}, opts), strata::sdk::Error);
  server->stop();

  TestServer u(dev);
  CHECK(u.server->bound_address() == "unix:" + u.path);
  strata::rbd::NbdServerOptions same;
  same.unix_path = u.path;
  CHECK_THROWS_AS(strata::rbd::NbdServer::start({{"", "", dev}}, same), strata::sdk::Error);
  strata::rbd::NbdServerOptions both = same;
  both.tcp_listen = "127.0.0.1:0";
  CHECK_THROWS_AS(strata::rbd::NbdServer::start({{"", "", dev}}, both), strata::sdk::Error);
}

TEST_CASE("nbd: large writes in flight beyond the buffer budget all complete", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize * 12, false, 2);
  strata::rbd::NbdServerOptions opts;
  opts.max_payload = 1 << 20;
  TestServer s(dev, opts);
  TestClient c(s.path);
  c.go();
  constexpr int kCount = 80;  // 80 MiB: more than the 64 MiB a connection may hold
  std::thread writer([&] {
    std::string data = block_of(7, 1 << 20);
    for (int i = 0; i < kCount; ++i) c.send_request(kCmdWrite, 0, i, uint64_t(i) << 20, 1 << 20, data);
  });
  int ok = 0;
  for (int i = 0; i < kCount; ++i) ok += c.read_simple().error == 0;
  writer.join();
  CHECK(ok == kCount);
  c.send_request(kCmdRead, 0, 1, uint64_t(kCount - 1) << 20, 1 << 20);
  CHECK(c.read_simple(1 << 20).data == block_of(7, 1 << 20));
}

namespace {

// A MemDevice whose reads complete 100 ms late, counting completions.
class SlowDevice : public MemDevice {
 public:
  SlowDevice() : MemDevice(kSize, false, 4) {}
  void read(uint64_t off, uint64_t len, char *out, strata::rbd::Done done) override {
    MemDevice::read(off, len, out, [this, done = std::move(done)](int r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      completed++;  // before done(): once done() ran the server may count it finished
      done(r);
    });
  }
  std::atomic<int> completed{0};
};

}  // namespace

TEST_CASE("nbd: stop() waits for the device's requests in flight", "[nbd]") {
  auto dev = std::make_shared<SlowDevice>();
  auto s = std::make_unique<TestServer>(dev);
  TestClient c(s->path);
  c.go("", true);
  for (int i = 0; i < 8; ++i) c.send_request(kCmdRead, 0, i, 0, 4096);
  // The server has taken them all once the first completes (100 ms).
  Chunk first = c.read_chunk();
  CHECK(first.type == kReplyTypeOffsetHole);
  s->server->stop();
  CHECK(dev->completed == 8);
  // Their replies went out before the connection closed.
  int replies = 1;
  try {
    for (;;) {
      c.read_chunk();
      ++replies;
    }
  } catch (const std::runtime_error &) {
  }
  CHECK(replies == 8);
}
