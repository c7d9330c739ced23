// NBD commands against a MemDevice: what each does to the device and what
// comes back, with simple and with structured replies, and every error
// the server answers instead of passing a bad request on.
#include <catch2/catch.hpp>

#include "mem_device.h"
#include "nbd_protocol.h"
#include "nbd_test_client.h"

using namespace rbdtest;
using namespace strata::rbd::nbd;

namespace {

constexpr uint64_t kSize = 1 << 20;

std::string pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char(seed + i % 251);
  return s;
}

// A MemDevice whose writes fail with a chosen errno.
class FailingDevice : public MemDevice {
 public:
  explicit FailingDevice(int err) : MemDevice(kSize), err_(err) {}
  void write(uint64_t, uint64_t, const char *, bool, strata::rbd::Done done) override { done(-err_); }

 private:
  int err_;
};

uint32_t chunk_error(const Chunk &c) { return be32_at(c.payload, 0); }

}  // namespace

TEST_CASE("nbd simple replies: write, read, flush, trim, zeroes, cache", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  TestServer s(dev);
  TestClient c(s.path);
  c.go();
  std::string data = pattern(8192, 'a');
  c.send_request(kCmdWrite, kCmdFlagFua, 1, 4096, 8192, data);
  SimpleReply r = c.read_simple();
  CHECK(r.cookie == 1);
  CHECK(r.error == 0);
  c.send_request(kCmdRead, 0, 2, 4096, 8192);
  r = c.read_simple(8192);
  CHECK(r.error == 0);
  CHECK(r.data == data);

  c.send_request(kCmdFlush, 0, 3, 0, 0);
  CHECK(c.read_simple().error == 0);
  CHECK(dev->flushes() == 1);

  c.send_request(kCmdTrim, 0, 4, 4096, 4096);
  CHECK(c.read_simple().error == 0);
  c.send_request(kCmdRead, 0, 5, 4096, 8192);
  r = c.read_simple(8192);
  CHECK(r.data == std::string(4096, '\0') + data.substr(4096));

  // WRITE_ZEROES over a whole chunk: NO_HOLE keeps it allocated, without
  // the flag it may be (and on MemDevice is) unmapped.
  c.send_request(kCmdWrite, 0, 6, 65536, 65536, pattern(65536, 'x'));
  CHECK(c.read_simple().error == 0);
  size_t allocated = dev->allocated_chunks();
  c.send_request(kCmdWriteZeroes, kCmdFlagNoHole, 7, 65536, 65536);
  CHECK(c.read_simple().error == 0);
  CHECK(dev->allocated_chunks() == allocated);
  c.send_request(kCmdWriteZeroes, 0, 8, 65536, 65536);
  CHECK(c.read_simple().error == 0);
  CHECK(dev->allocated_chunks() == allocated - 1);
  c.send_request(kCmdRead, 0, 9, 65536, 100);
  CHECK(c.read_simple(100).data == std::string(100, '\0'));

  c.send_request(kCmdCache, 0, 10, 0, 65536);
  CHECK(c.read_simple().error == 0);
  auto st = s.server->stats();
  CHECK(st.writes == 2);
  CHECK(st.reads == 3);
  CHECK(st.trims == 1);
  CHECK(st.zeroes == 2);
  CHECK(st.caches == 1);
  CHECK(st.flushes == 1);
  CHECK(st.bytes_written == 8192 + 65536);
}

TEST_CASE("nbd simple replies: bad requests get errors and the connection lives on", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  strata::rbd::NbdServerOptions opts;
  opts.max_payload = 64 * 1024;
  TestServer s(dev, opts);
  TestClient c(s.path);
  c.go();
  auto expect = [&](uint16_t type, uint16_t flags, uint64_t off, uint32_t len, uint32_t err,
                    const std::string &payload = {}) {
    c.send_request(type, flags, 42, off, len, payload);
    SimpleReply r = c.read_simple();
    CHECK(r.cookie == 42);
    CHECK(r.error == err);
  };
  expect(kCmdRead, 0, kSize - 10, 20, kErrInval);
  expect(kCmdRead, 0, kSize + 4096, 1, kErrInval);
  expect(kCmdRead, 0, ~0ull - 10, 20, kErrInval);  // offset + length wraps
  expect(kCmdRead, 0, 0, 0, kErrInval);
  expect(kCmdRead, 0, 0, 128 * 1024, kErrInval);  // over max_payload, simple: EINVAL
  expect(kCmdRead, kCmdFlagDf, 0, 512, kErrInval);  // DF needs structured replies
  expect(kCmdWrite, 0, kSize - 10, 20, kErrNoSpc, std::string(20, 'z'));
  expect(kCmdWrite, 0, 0, 128 * 1024, kErrInval, std::string(128 * 1024, 'z'));
  expect(kCmdWriteZeroes, 0, kSize, 1, kErrNoSpc);
  expect(kCmdWriteZeroes, kCmdFlagFastZero, 0, 512, kErrInval);
  expect(kCmdTrim, 0, kSize - 1, 2, kErrInval);
  expect(kCmdCache, 0, kSize, 1, kErrInval);
  expect(kCmdFlush, 0, 0, 10, kErrInval);
  expect(kCmdWrite, kCmdFlagReqOne, 0, 4, kErrInval, "abcd");
  expect(kCmdBlockStatus, 0, 0, 4096, kErrInval);  // no meta context
  expect(99, 0, 0, 0, kErrInval);
  // Nothing above reached the device.
  CHECK(dev->allocated_chunks() == 0);
  expect(kCmdWrite, 0, 0, 4, 0, "abcd");
  CHECK(s.server->stats().errors == 16);
}

TEST_CASE("nbd: device errors map onto the NBD error set", "[nbd]") {
  for (auto [err, want] : {std::pair{ENOSPC, kErrNoSpc}, {EDQUOT, kErrNoSpc}, {EIO, kErrIo},
                           {ETIMEDOUT, kErrIo}, {EROFS, kErrPerm}, {ENOMEM, kErrIo},
                           {ENOTSUP, kErrIo}, {EOVERFLOW, kErrOverflow}}) {
    TestServer s(std::make_shared<FailingDevice>(err));
    TestClient c(s.path);
    c.go("", true);
    c.send_request(kCmdWrite, 0, 3, 0, 4, "abcd");
    Chunk ch = c.read_chunk();
    CHECK(ch.done());
    CHECK(ch.type == kReplyTypeError);
    CHECK(chunk_error(ch) == want);
  }
}

TEST_CASE("nbd: a read-only export refuses writes with EPERM", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize, true);
  TestServer s(dev);
  TestClient c(s.path);
  ExportInfo info = c.go();
  CHECK((info.flags & kTxReadOnly) != 0);
  c.send_request(kCmdWrite, 0, 1, 0, 4, "abcd");
  CHECK(c.read_simple().error == kErrPerm);
  c.send_request(kCmdTrim, 0, 2, 0, 4096);
  CHECK(c.read_simple().error == kErrPerm);
  c.send_request(kCmdWriteZeroes, 0, 3, 0, 4096);
  CHECK(c.read_simple().error == kErrPerm);
  c.send_request(kCmdRead, 0, 4, 0, 4);
  CHECK(c.read_simple(4).data == std::string(4, '\0'));
}

TEST_CASE("nbd structured replies: data and hole chunks, DF, errors", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  strata::rbd::NbdServerOptions opts;
  opts.max_payload = 256 * 1024;
  TestServer s(dev, opts);
  TestClient c(s.path);
  ExportInfo info = c.go("", true);
  CHECK((info.flags & kTxSendDf) != 0);
  std::string data = pattern(4096, 'q');
  c.send_request(kCmdWrite, 0, 1, 8192, 4096, data);
  Chunk ack = c.read_chunk();
  CHECK(ack.type == kReplyTypeNone);
  CHECK(ack.done());
  CHECK(ack.cookie == 1);

  // [0, 16384): hole 8 KiB, data 4 KiB, hole 4 KiB.
  c.send_request(kCmdRead, 0, 2, 0, 16384);
  std::vector<Chunk> chunks = c.read_structured();
  std::string assembled(16384, 'X');
  for (const Chunk &ch : chunks) {
    CHECK(ch.cookie == 2);
    uint64_t off = be64_at(ch.payload, 0);
    if (ch.type == kReplyTypeOffsetHole) {
      assembled.replace(off, be32_at(ch.payload, 8), std::string(be32_at(ch.payload, 8), '\0'));
    } else {
      REQUIRE(ch.type == kReplyTypeOffsetData);
      assembled.replace(off, ch.payload.size() - 8, ch.payload.substr(8));
    }
  }
  CHECK(chunks.size() == 3);
  CHECK(assembled == std::string(8192, '\0') + data + std::string(4096, '\0'));

  // DF: one chunk, all data.
  c.send_request(kCmdRead, kCmdFlagDf, 3, 0, 16384);
  chunks = c.read_structured();
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].type == kReplyTypeOffsetData);
  CHECK(chunks[0].payload.substr(8) == std::string(8192, '\0') + data + std::string(4096, '\0'));

  // An unaligned read of data: one data chunk.
  c.send_request(kCmdRead, 0, 4, 8200, 100);
  chunks = c.read_structured();
  REQUIRE(chunks.size() == 1);
  CHECK(be64_at(chunks[0].payload, 0) == 8200);
  CHECK(chunks[0].payload.substr(8) == data.substr(8, 100));

  c.send_request(kCmdRead, 0, 5, 0, 512 * 1024);
  Chunk err = c.read_chunk();
  CHECK(err.type == kReplyTypeError);
  CHECK(err.done());
  CHECK(chunk_error(err) == kErrOverflow);
  c.send_request(kCmdRead, 0, 6, kSize, 1);
  CHECK(chunk_error(c.read_chunk()) == kErrInval);
  c.send_request(kCmdFlush, 0, 7, 0, 0);
  CHECK(c.read_chunk().type == kReplyTypeNone);
}

TEST_CASE("nbd structured replies: block status for base:allocation", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  TestServer s(dev);
  TestClient c(s.path);
  c.go("", true, true);
  // Chunk 1 (64 KiB..128 KiB) holds data, the rest is a hole.
  c.send_request(kCmdWrite, 0, 1, 70000, 10, "0123456789");
  c.read_chunk();
  c.send_request(kCmdBlockStatus, 0, 2, 0, 256 * 1024);
  Chunk ch = c.read_chunk();
  CHECK(ch.done());
  REQUIRE(ch.type == kReplyTypeBlockStatus);
  REQUIRE(ch.payload.size() == 4 + 3 * 8);
  CHECK(be32_at(ch.payload, 4) == 65536);
  CHECK(be32_at(ch.payload, 8) == (kStateHole | kStateZero));
  CHECK(be32_at(ch.payload, 12) == 65536);
  CHECK(be32_at(ch.payload, 16) == 0);
  CHECK(be32_at(ch.payload, 20) == 131072);
  CHECK(be32_at(ch.payload, 24) == (kStateHole | kStateZero));

  c.send_request(kCmdBlockStatus, kCmdFlagReqOne, 3, 1000, 100);
  ch = c.read_chunk();
  REQUIRE(ch.payload.size() == 12);
  CHECK(be32_at(ch.payload, 4) == 100);

  c.send_request(kCmdBlockStatus, 0, 4, kSize - 10, 11);
  CHECK(chunk_error(c.read_chunk()) == kErrInval);
  c.send_request(kCmdBlockStatus, kCmdFlagDf, 5, 0, 10);
  CHECK(chunk_error(c.read_chunk()) == kErrInval);
  CHECK(s.server->stats().block_status == 2);
}

TEST_CASE("nbd: bad request magic closes, DISC closes after the replies", "[nbd]") {
  auto dev = std::make_shared<MemDevice>(kSize);
  TestServer s(dev);
  {
    TestClient c(s.path);
    c.go();
    c.send_request(kCmdRead, 0, 1, 0, 4, {}, 0xdeadbeef);
    CHECK(c.closed_by_server());
  }
  {
    TestClient c(s.path);
    c.go();
    c.send_request(kCmdWrite, 0, 1, 0, 4, "abcd");
    c.send_request(kCmdDisc, 0, 2, 0, 0);
    CHECK(c.read_simple().cookie == 1);
    CHECK(c.closed_by_server());
  }
  CHECK(dev->allocated_chunks() == 1);
}
