// The client half of the NBD handshake (kernel_nbd/nbd_client_handshake.h)
// against the project's NBD server on one end of a socketpair, the way the
// kernel path uses it; then requests by hand on the same socket, which is
// what the kernel would do with it. Scripted servers stand in for the
// replies the real one never sends.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "mem_device.h"
#include "nbd_client_handshake.h"
#include "nbd_protocol.h"
#include "nbd_server.h"
#include "nbd_socket.h"

using namespace strata::rbd;
using namespace strata::rbd::nbd;
using rbdtest::MemDevice;

namespace {

struct Pair {
  int client = -1, server = -1;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    client = fds[0];
    server = fds[1];
  }
  ~Pair() {
    if (client >= 0) ::close(client);
    if (server >= 0) ::close(server);
  }
};

// The real server, listening nowhere, serving `dev` as "rbd/disk".
struct Served {
  explicit Served(std::shared_ptr<BlockDevice> dev, bool read_only = false) {
    NbdServerOptions o;
    o.read_only = read_only;
    server = NbdServer::start_unlistening({{"rbd/disk", "a test disk", std::move(dev)}}, o);
    REQUIRE(server->adopt(pair.server) == 0);
    pair.server = -1;  // the server owns it now
  }
  Pair pair;
  std::unique_ptr<NbdServer> server;
};

std::string be(uint64_t v, int bytes) {
  std::string s;
  for (int i = bytes - 1; i >= 0; --i) s.push_back(char(v >> (8 * i)));
  return s;
}

void send_all(int fd, const std::string &b) { REQUIRE(write_all(fd, b.data(), b.size()) == 0); }

std::string recv_n(int fd, size_t n) {
  std::string b(n, '\0');
  REQUIRE(read_exact(fd, b.data(), n, -1, Clock::now() + std::chrono::seconds(10)) == 0);
  return b;
}

uint64_t from_be(const std::string &s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | uint8_t(s[pos + i]);
  return v;
}

std::string greeting(uint64_t second_magic = kOptionMagic, uint16_t flags = kFlagFixedNewstyle | kFlagNoZeroes) {
  return be(kNbdMagic, 8) + be(second_magic, 8) + be(flags, 2);
}

// Reads the client's flags and its GO option (whatever its length).
void take_go(int fd) {
  recv_n(fd, 4);
  std::string head = recv_n(fd, 16);
  recv_n(fd, from_be(head, 12, 4));
}

std::string option_reply(uint32_t opt, uint32_t type, const std::string &data) {
  return be(kOptionReplyMagic, 8) + be(opt, 4) + be(type, 4) + be(data.size(), 4) + data;
}

// A scripted server on its own thread: `script(fd)` then close.
template <class F>
int go_against(F script, NbdClientExport *out, std::string *why, uint32_t timeout_ms = 5000) {
  Pair p;
  std::thread t([&] {
    script(p.server);
    ::close(p.server);
    p.server = -1;
  });
  int rc = nbd_client_go(p.client, "rbd/disk", timeout_ms, out, why);
  t.join();
  return rc;
}

}  // namespace

TEST_CASE("kernel nbd handshake: GO learns the size, the flags and the block sizes", "[kernel_nbd]") {
  Served s(std::make_shared<MemDevice>(3 << 20));
  NbdClientExport e;
  std::string why;
  REQUIRE(nbd_client_go(s.pair.client, "rbd/disk", 5000, &e, &why) == 0);
  CHECK(e.size == (3u << 20));
  uint16_t want = kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim | kTxSendWriteZeroes | kTxCanMultiConn;
  CHECK((e.transmission_flags & want) == want);
  CHECK((e.transmission_flags & kTxReadOnly) == 0);
  // Structured replies were not asked for (the kernel cannot read them).
  CHECK((e.transmission_flags & kTxSendDf) == 0);
  CHECK(e.block_sizes_sent);
  CHECK(e.min_block == 1);
  CHECK(e.preferred_block == 4096);
  CHECK(e.max_block == (32u << 20));
}

TEST_CASE("kernel nbd handshake: a read-only export says so in its flags", "[kernel_nbd]") {
  SECTION("the device is read-only") {
    Served s(std::make_shared<MemDevice>(1 << 20, true));
    NbdClientExport e;
    std::string why;
    REQUIRE(nbd_client_go(s.pair.client, "rbd/disk", 5000, &e, &why) == 0);
    CHECK((e.transmission_flags & kTxReadOnly) != 0);
    CHECK((e.transmission_flags & kTxSendTrim) == 0);
  }
  SECTION("the server is read-only") {
    Served s(std::make_shared<MemDevice>(1 << 20), true);
    NbdClientExport e;
    std::string why;
    REQUIRE(nbd_client_go(s.pair.client, "rbd/disk", 5000, &e, &why) == 0);
    CHECK((e.transmission_flags & kTxReadOnly) != 0);
  }
}

TEST_CASE("kernel nbd handshake: an unknown export name is ENOENT, naming it", "[kernel_nbd]") {
  Served s(std::make_shared<MemDevice>(1 << 20));
  NbdClientExport e;
  std::string why;
  CHECK(nbd_client_go(s.pair.client, "rbd/other", 5000, &e, &why) == -ENOENT);
  CHECK(why.find("'rbd/other'") != std::string::npos);
  CHECK(why.find("no such export") != std::string::npos);
}

TEST_CASE("kernel nbd handshake: a server that closes mid-way is an error, not a hang", "[kernel_nbd]") {
  NbdClientExport e;
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  SECTION("after the greeting") {
    CHECK(go_against([](int fd) { send_all(fd, greeting()); }, &e, &why) == -ECONNRESET);
  }
  SECTION("in the middle of a reply") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepInfo, be(kInfoExport, 2) + be(1 << 20, 8)).substr(0, 24));
              },
              &e, &why) == -ECONNRESET);
  }
  SECTION("before saying anything") {
    CHECK(go_against([](int) {}, &e, &why) == -ECONNRESET);
  }
  CHECK(why.find("closed the connection") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
}

TEST_CASE("kernel nbd handshake: a silent server times out", "[kernel_nbd]") {
  NbdClientExport e;
  std::string why;
  Pair p;  // nobody answers on p.server
  CHECK(nbd_client_go(p.client, "rbd/disk", 200, &e, &why) == -ETIMEDOUT);
  CHECK(why.find("greeting") != std::string::npos);
}

TEST_CASE("kernel nbd handshake: replies the protocol does not allow are refused", "[kernel_nbd]") {
  NbdClientExport e;
  std::string why;
  SECTION("garbage instead of NBDMAGIC") {
    CHECK(go_against([](int fd) { send_all(fd, std::string(18, 'x')); }, &e, &why) == -EPROTO);
    CHECK(why.find("NBDMAGIC") != std::string::npos);
  }
  SECTION("a bad second magic") {
    CHECK(go_against([](int fd) { send_all(fd, greeting(0x1234)); }, &e, &why) == -EPROTO);
  }
  SECTION("an oldstyle server") {
    CHECK(go_against([](int fd) { send_all(fd, greeting(0x00420281861253ull)); }, &e, &why) == -EOPNOTSUPP);
    CHECK(why.find("oldstyle") != std::string::npos);
  }
  SECTION("no fixed newstyle") {
    CHECK(go_against([](int fd) { send_all(fd, greeting(kOptionMagic, 0)); }, &e, &why) == -EOPNOTSUPP);
  }
  SECTION("a bad option reply magic") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, std::string(20, 'y'));
              },
              &e, &why) == -EPROTO);
    CHECK(why.find("option reply magic") != std::string::npos);
  }
  SECTION("a reply to another option") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptList, kRepAck, ""));
              },
              &e, &why) == -EPROTO);
  }
  SECTION("ACK before the export's size") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepAck, ""));
              },
              &e, &why) == -EPROTO);
    CHECK(why.find("NBD_INFO_EXPORT") != std::string::npos);
  }
  SECTION("a short NBD_INFO_EXPORT") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepInfo, be(kInfoExport, 2) + be(1 << 20, 8)));
              },
              &e, &why) == -EPROTO);
  }
  SECTION("block sizes that break the rules") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepInfo, be(kInfoBlockSize, 2) + be(3, 4) + be(4096, 4) + be(8192, 4)));
              },
              &e, &why) == -EPROTO);
  }
  SECTION("an announced reply far too long") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, be(kOptionReplyMagic, 8) + be(kOptGo, 4) + be(kRepInfo, 4) + be(1u << 30, 4));
              },
              &e, &why) == -EPROTO);
  }
  SECTION("TLS required") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepErrTlsReqd, "use TLS"));
              },
              &e, &why) == -EACCES);
    CHECK(why.find("TLS") != std::string::npos);
    CHECK(why.find("use TLS") != std::string::npos);
  }
  SECTION("no flags bit in the transmission flags") {
    CHECK(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepInfo, be(kInfoExport, 2) + be(1 << 20, 8) + be(0, 2)) +
                                 option_reply(kOptGo, kRepAck, ""));
              },
              &e, &why) == -EPROTO);
  }
}

TEST_CASE("kernel nbd handshake: records it does not know are skipped", "[kernel_nbd]") {
  NbdClientExport e;
  std::string why;
  REQUIRE(go_against(
              [](int fd) {
                send_all(fd, greeting());
                take_go(fd);
                send_all(fd, option_reply(kOptGo, kRepInfo, be(kInfoDescription, 2) + "hello") +
                                 option_reply(kOptGo, kRepInfo, be(kInfoExport, 2) + be(5 << 20, 8) + be(kTxHasFlags | kTxReadOnly, 2)) +
                                 option_reply(kOptGo, kRepAck, ""));
              },
              &e, &why) == 0);
  CHECK(e.size == (5u << 20));
  CHECK(e.transmission_flags == (kTxHasFlags | kTxReadOnly));
  CHECK_FALSE(e.block_sizes_sent);
}

TEST_CASE("kernel nbd handshake: after GO the socket carries requests (what the kernel sends)", "[kernel_nbd]") {
  auto dev = std::make_shared<MemDevice>(1 << 20);
  Served s(dev);
  NbdClientExport e;
  std::string why;
  REQUIRE(nbd_client_go(s.pair.client, "rbd/disk", 5000, &e, &why) == 0);
  int fd = s.pair.client;
  auto request = [](uint16_t type, uint64_t cookie, uint64_t off, uint32_t len) {
    return be(kRequestMagic, 4) + be(0, 2) + be(type, 2) + be(cookie, 8) + be(off, 8) + be(len, 4);
  };
  // WRITE 4 KiB at 64 KiB, simple reply.
  std::string data(4096, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 7 + 3);
  send_all(fd, request(kCmdWrite, 11, 65536, 4096) + data);
  std::string r = recv_n(fd, kSimpleReplySize);
  CHECK(from_be(r, 0, 4) == kSimpleReplyMagic);
  CHECK(from_be(r, 4, 4) == 0);
  CHECK(from_be(r, 8, 8) == 11);
  // FLUSH reaches the device.
  uint64_t flushes = dev->flushes();
  send_all(fd, request(kCmdFlush, 12, 0, 0));
  r = recv_n(fd, kSimpleReplySize);
  CHECK(from_be(r, 4, 4) == 0);
  CHECK(dev->flushes() == flushes + 1);
  // READ it back: reply header, then the data.
  send_all(fd, request(kCmdRead, 13, 65536, 4096));
  r = recv_n(fd, kSimpleReplySize);
  CHECK(from_be(r, 0, 4) == kSimpleReplyMagic);
  CHECK(from_be(r, 4, 4) == 0);
  CHECK(from_be(r, 8, 8) == 13);
  CHECK(recv_n(fd, 4096) == data);
  // DISC: the server closes its end.
  send_all(fd, request(kCmdDisc, 14, 0, 0));
  char c;
  CHECK(read_exact(fd, &c, 1, -1, Clock::now() + std::chrono::seconds(10)) == -ECONNRESET);
}

TEST_CASE("nbd server: adopt() after stop() is refused and closes the socket", "[kernel_nbd]") {
  auto server = NbdServer::start_unlistening({{"", "", std::make_shared<MemDevice>(1 << 20)}}, {});
  CHECK(server->bound_address().empty());
  server->stop();
  Pair p;
  CHECK(server->adopt(p.server) == -ESHUTDOWN);
  p.server = -1;
  char c;
  CHECK(read_exact(p.client, &c, 1, -1, Clock::now() + std::chrono::seconds(10)) == -ECONNRESET);
}

TEST_CASE("nbd server: a server that listens nowhere takes no address", "[kernel_nbd]") {
  NbdServerOptions o;
  o.unix_path = "/tmp/nope.sock";
  CHECK_THROWS(NbdServer::start_unlistening({{"", "", std::make_shared<MemDevice>(1 << 20)}}, o));
}
