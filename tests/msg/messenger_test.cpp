// The messenger over real TCP on 127.0.0.1: message exchange with data
// segments, concurrency, authentication failures in both directions, bad
// input from raw sockets, timeouts, and close/stop semantics.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <random>
#include <set>

#include "msg/frame.h"
#include "msg/message_types.h"
#include "msg/schema/handshake.capnp.h"
#include "msg/schema/wire.capnp.h"
#include "msg/wire_codec.h"
#include "msg_test_util.h"

using namespace strata::msg;
using namespace std::chrono_literals;
using msgtest::wait_for;

namespace {

strata::Logger &test_log() {
  static strata::Logger log(STRATA_LOG_WARN);
  return log;
}

const std::string kClientKey = std::string(32, 'c');
const std::string kOtherKey = std::string(32, 'x');

Message heartbeat(int from, std::vector<std::string> segs = {}) {
  capnp::MallocMessageBuilder b;
  auto hb = b.initRoot<strata::wire::Heartbeat>();
  hb.setFrom(from);
  hb.setStampNs(12345);
  return make_message(kMsgHeartbeat, b, std::move(segs));
}

int heartbeat_from(const Message &m) {
  int from = -1;
  auto s = read_message<strata::wire::Heartbeat>(m, "Heartbeat", [&](strata::wire::Heartbeat::Reader r) {
    from = r.getFrom();
    return strata::Status::OK();
  });
  REQUIRE(s.ok());
  return from;
}

std::string random_bytes(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto &c : s) c = static_cast<char>(rng());
  return s;
}

// A listening messenger that echoes every message back and counts events.
struct EchoServer {
  explicit EchoServer(std::map<std::string, std::string> keys, MessengerOptions opts = {})
      : m("osd.0", std::string(32, 's'), msgtest::lookup_from(std::move(keys)), test_log(), opts) {
    Handlers h;
    h.on_message = [this](const ConnectionRef &c, Message &&msg) {
      ++messages;
      c->send(std::move(msg));
    };
    h.on_accept = [this](const ConnectionRef &c) {
      std::lock_guard lk(mu);
      accepted.push_back(c);
    };
    h.on_close = [this](const ConnectionRef &c, const std::string &reason) {
      std::lock_guard lk(mu);
      closed.push_back({c.get(), reason});
    };
    m.set_handlers(h);
    auto r = m.listen("127.0.0.1", 0);
    REQUIRE(r.ok());
    addr = r.value();
    m.start();
  }
  // The handlers use the members below, so stop before they are destroyed.
  ~EchoServer() { m.stop(); }
  std::size_t n_accepted() {
    std::lock_guard lk(mu);
    return accepted.size();
  }
  std::size_t n_closed() {
    std::lock_guard lk(mu);
    return closed.size();
  }
  Messenger m;
  std::string addr;
  std::atomic<int> messages{0};
  std::mutex mu;
  std::vector<ConnectionRef> accepted;
  std::vector<std::pair<Connection *, std::string>> closed;
};

// A connecting messenger that records what arrives.
struct Client {
  explicit Client(std::string self, std::string key, MessengerOptions opts = {})
      : m(std::move(self), std::move(key), nullptr, test_log(), opts) {
    Handlers h;
    h.on_message = [this](const ConnectionRef &, Message &&msg) {
      std::lock_guard lk(mu);
      got.push_back(std::move(msg));
    };
    h.on_close = [this](const ConnectionRef &, const std::string &reason) {
      std::lock_guard lk(mu);
      close_reasons.push_back(reason);
    };
    m.set_handlers(h);
    m.start();
  }
  ~Client() { m.stop(); }
  std::size_t n_got() {
    std::lock_guard lk(mu);
    return got.size();
  }
  std::size_t n_closed() {
    std::lock_guard lk(mu);
    return close_reasons.size();
  }
  Messenger m;
  std::mutex mu;
  std::vector<Message> got;
  std::vector<std::string> close_reasons;
};

}  // namespace

TEST_CASE("messages with data segments travel both ways") {
  EchoServer server({{"client.a", kClientKey}});
  Client client("client.a", kClientKey);
  auto conn = client.m.connect(server.addr, 5s);
  REQUIRE(conn.ok());
  ConnectionRef c = conn.value();
  CHECK(c->is_open());
  CHECK(c->peer_entity() == "osd.0");
  CHECK(c->peer_address() == server.addr);
  REQUIRE(wait_for([&] { return server.n_accepted() == 1; }));
  CHECK(server.accepted[0]->peer_entity() == "client.a");

  std::vector<Message> sent;
  for (int i = 0; i < 60; ++i) {
    std::vector<std::string> segs;
    if (i % 3 == 1) segs = {random_bytes(4096, i)};
    if (i % 3 == 2) segs = {random_bytes(10, i), "", random_bytes(i % 10 == 2 ? 3 << 20 : 70000, i + 1)};
    sent.push_back(heartbeat(i, segs));
    REQUIRE(c->send(sent.back()));
  }
  REQUIRE(wait_for([&] { return client.n_got() == sent.size(); }, 20000));
  std::lock_guard lk(client.mu);
  for (std::size_t i = 0; i < sent.size(); ++i) {
    CHECK(client.got[i].type == kMsgHeartbeat);
    CHECK(heartbeat_from(client.got[i]) == static_cast<int>(i));
    CHECK(client.got[i].segments == sent[i].segments);
  }
}

TEST_CASE("the accepting side can send first, right after on_accept") {
  Messenger server("mon", std::string(32, 'm'), msgtest::lookup_from({{"osd.1", kClientKey}}),
                   test_log());
  Handlers h;
  h.on_accept = [](const ConnectionRef &c) { c->send(heartbeat(77, {"hello"})); };
  server.set_handlers(h);
  auto addr = server.listen("127.0.0.1", 0);
  REQUIRE(addr.ok());
  server.start();
  Client client("osd.1", kClientKey);
  REQUIRE(client.m.connect(addr.value()).ok());
  REQUIRE(wait_for([&] { return client.n_got() == 1; }));
  std::lock_guard lk(client.mu);
  CHECK(heartbeat_from(client.got[0]) == 77);
  CHECK(client.got[0].segments == std::vector<std::string>{"hello"});
}

TEST_CASE("many concurrent connections and senders") {
  MessengerOptions sopts;
  sopts.io_threads = 2;
  EchoServer server({{"client.a", kClientKey}, {"client.b", kOtherKey}}, sopts);
  MessengerOptions copts;
  copts.io_threads = 2;
  Client ca("client.a", kClientKey, copts);
  Client cb("client.b", kOtherKey, copts);
  constexpr int kConns = 6, kThreads = 4, kPerThread = 150;
  std::vector<ConnectionRef> conns;
  for (int i = 0; i < kConns; ++i) {
    auto r = (i % 2 ? cb : ca).m.connect(server.addr);
    REQUIRE(r.ok());
    conns.push_back(r.value());
  }
  std::vector<std::thread> threads;
  std::atomic<int> send_failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto &c = conns[(t + i) % kConns];
        if (!c->send(heartbeat(t * 1000 + i, {random_bytes(i % 7 * 1000, i)}))) ++send_failures;
      }
    });
  for (auto &t : threads) t.join();
  CHECK(send_failures == 0);
  const std::size_t total = kThreads * kPerThread;
  REQUIRE(wait_for([&] { return ca.n_got() + cb.n_got() == total; }, 30000));
  std::set<int> seen;
  for (Client *c : {&ca, &cb}) {
    std::lock_guard lk(c->mu);
    for (auto &m : c->got) seen.insert(heartbeat_from(m));
  }
  CHECK(seen.size() == total);
  CHECK(server.messages == static_cast<int>(total));
}

TEST_CASE("frames from many threads on one connection keep each sender's order, also when a "
          "direct send fills the socket and the I/O thread finishes it") {
  // Frames of up to 3 MiB overflow the socket buffer, so a send from a
  // caller's thread is cut short and its rest handed to the I/O thread while
  // the other senders queue behind it; small ones go out directly.
  EchoServer server({{"client.a", kClientKey}});
  Client ca("client.a", kClientKey);
  auto r = ca.m.connect(server.addr);
  REQUIRE(r.ok());
  ConnectionRef conn = r.value();
  constexpr int kThreads = 3, kPerThread = 40;
  auto payload = [](int from) {
    size_t n = from % 5 == 0 ? (1u << 20) * (1 + from % 3) : static_cast<size_t>(from % 7) * 100;
    return random_bytes(n, static_cast<uint32_t>(from));
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        int from = t * 1000 + i;
        REQUIRE(conn->send(heartbeat(from, {payload(from)})));
      }
    });
  for (auto &t : threads) t.join();
  REQUIRE(wait_for([&] { return ca.n_got() == kThreads * kPerThread; }, 60000));
  std::lock_guard lk(ca.mu);
  std::vector<int> next(kThreads, 0);
  for (auto &m : ca.got) {
    int from = heartbeat_from(m);
    int t = from / 1000, i = from % 1000;
    REQUIRE(t < kThreads);
    CHECK(i == next[t]);  // each sender's frames arrive (and come back) in order
    next[t] = i + 1;
    REQUIRE(m.segments.size() == 1);
    CHECK(m.segments[0] == payload(from));
  }
}

TEST_CASE(
    "frames held by a SendBatch all arrive, in order, also past a full socket and with "
    "unbatched senders on the same connection") {
  // One thread sends in nested batches (many small frames, some of several
  // MiB that a single gather write cannot take), another sends unbatched:
  // every frame comes back, each sender's in order, intact.
  EchoServer server({{"client.a", kClientKey}});
  Client ca("client.a", kClientKey);
  auto r = ca.m.connect(server.addr);
  REQUIRE(r.ok());
  ConnectionRef conn = r.value();
  constexpr int kBatches = 30, kPerBatch = 12, kLoose = 150;
  auto payload = [](int from) {
    size_t n = from % 17 == 0 ? (1u << 20) * (1 + from % 3) : static_cast<size_t>(from % 9) * 50;
    return random_bytes(n, static_cast<uint32_t>(from));
  };
  std::thread loose([&] {
    for (int i = 0; i < kLoose; ++i) REQUIRE(conn->send(heartbeat(1000000 + i, {payload(i)})));
  });
  int from = 0;
  for (int b = 0; b < kBatches; ++b) {
    SendBatch outer;
    for (int i = 0; i < kPerBatch / 2; ++i, ++from)
      REQUIRE(conn->send(heartbeat(from, {payload(from)})));
    SendBatch inner;  // nested: still held until `outer` ends
    for (int i = kPerBatch / 2; i < kPerBatch; ++i, ++from)
      REQUIRE(conn->send(heartbeat(from, {payload(from)})));
  }
  loose.join();
  REQUIRE(wait_for([&] { return ca.n_got() == kBatches * kPerBatch + kLoose; }, 60000));
  std::lock_guard lk(ca.mu);
  int next_batched = 0, next_loose = 0;
  for (auto &m : ca.got) {
    int f = heartbeat_from(m);
    REQUIRE(m.segments.size() == 1);
    if (f >= 1000000) {
      CHECK(f - 1000000 == next_loose);
      next_loose = f - 1000000 + 1;
      CHECK(m.segments[0] == payload(f - 1000000));
    } else {
      CHECK(f == next_batched);
      next_batched = f + 1;
      CHECK(m.segments[0] == payload(f));
    }
  }
}

TEST_CASE("a client with the wrong key is refused and nothing is delivered") {
  EchoServer server({{"client.a", kClientKey}});
  Client client("client.a", kOtherKey);
  auto r = client.m.connect(server.addr, 3s);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == -EACCES);
  CHECK_THAT(r.status().message(), Catch::Contains("authentication failed"));
  std::this_thread::sleep_for(50ms);
  CHECK(server.n_accepted() == 0);
  CHECK(server.messages == 0);
  CHECK(server.n_closed() == 0);  // on_close is only for connections handed out
}

TEST_CASE("a server that does not know the client's key refuses it") {
  EchoServer server({{"client.other", kClientKey}});  // no client.a
  Client client("client.a", kClientKey);
  auto r = client.m.connect(server.addr, 3s);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == -EACCES);
  CHECK(server.n_accepted() == 0);
  CHECK(server.messages == 0);
}

TEST_CASE("an unknown entity is refused") {
  EchoServer server({{"client.a", kClientKey}});
  Client client("client.nobody", kClientKey);
  auto r = client.m.connect(server.addr, 3s);
  REQUIRE(!r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("refused by the server"));
  CHECK(server.n_accepted() == 0);
}

TEST_CASE("the client refuses a server that cannot prove it knows the key") {
  // A rogue acceptor: sends a proper challenge, then an AuthReply with a
  // made-up proof, then a user message that must never be delivered.
  Messenger lst("osd.9", std::string(32, 'z'), msgtest::lookup_from({}), test_log());
  // Borrow a free port from a messenger that is then stopped.
  auto port_addr = lst.listen("127.0.0.1", 0);
  REQUIRE(port_addr.ok());
  lst.stop();
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = 0;
  REQUIRE(::bind(lfd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(lfd, 4) == 0);
  socklen_t len = sizeof sa;
  ::getsockname(lfd, reinterpret_cast<sockaddr *>(&sa), &len);
  std::string addr = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  std::thread rogue([lfd] {
    int fd = ::accept(lfd, nullptr, nullptr);
    capnp::MallocMessageBuilder b;
    auto ch = b.initRoot<hs::AuthChallenge>();
    std::string nonce(32, 'n');
    ch.setServerNonce(capnp::Data::Reader(reinterpret_cast<const kj::byte *>(nonce.data()), 32));
    ch.setServerEntity("osd.9");
    ch.setProtocolVersion(1);
    msgtest::write_all(fd, encode_frame(make_message(kMsgAuthChallenge, b)));
    char buf[4096];
    (void)::recv(fd, buf, sizeof buf, 0);  // the AuthRequest
    capnp::MallocMessageBuilder rb;
    std::string fake(32, 'f');
    rb.initRoot<hs::AuthReply>().setProof(capnp::Data::Reader(reinterpret_cast<const kj::byte *>(fake.data()), 32));
    msgtest::write_all(fd, encode_frame(make_message(kMsgAuthReply, rb)) + encode_frame(heartbeat(1)));
    msgtest::wait_closed(fd);
    ::close(fd);
  });
  Client client("client.a", kClientKey);
  auto r = client.m.connect(addr, 3s);
  rogue.join();
  ::close(lfd);
  REQUIRE(!r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("failed to prove"));
  CHECK(client.n_got() == 0);
}

TEST_CASE("bad input closes only that connection") {
  MessengerOptions opts;
  opts.max_payload = 64 * 1024;
  opts.handshake_timeout = 3000ms;
  EchoServer server({{"client.a", kClientKey}}, opts);
  auto good_client_works = [&] {
    Client client("client.a", kClientKey);
    auto c = client.m.connect(server.addr, 3s);
    REQUIRE(c.ok());
    REQUIRE(c.value()->send(heartbeat(5, {"x"})));
    REQUIRE(wait_for([&] { return client.n_got() == 1; }));
  };
  // A long-lived good connection that must survive everything below.
  Client keeper("client.a", kClientKey);
  auto kept = keeper.m.connect(server.addr, 3s);
  REQUIRE(kept.ok());

  SECTION("garbage bytes") {
    int fd = msgtest::raw_connect(server.addr);
    REQUIRE(fd >= 0);
    msgtest::write_all(fd, std::string(100, 'G'));
    CHECK(msgtest::wait_closed(fd));
    ::close(fd);
  }
  SECTION("a truncated frame") {
    int fd = msgtest::raw_connect(server.addr);
    std::string f = encode_frame(heartbeat(1));
    msgtest::write_all(fd, f.substr(0, f.size() / 2));
    ::shutdown(fd, SHUT_WR);
    CHECK(msgtest::wait_closed(fd));
    ::close(fd);
  }
  SECTION("a big frame before authentication") {
    int fd = msgtest::raw_connect(server.addr);
    Message m = heartbeat(1);
    m.payload.resize(100000);
    msgtest::write_all(fd, encode_frame(m).substr(0, 32));
    CHECK(msgtest::wait_closed(fd));
    ::close(fd);
  }
  SECTION("a user frame before authentication") {
    int fd = msgtest::raw_connect(server.addr);
    msgtest::write_all(fd, encode_frame(heartbeat(1)));
    CHECK(msgtest::wait_closed(fd));
    ::close(fd);
  }
  SECTION("an oversized frame from an authenticated peer") {
    MessengerOptions big;
    big.max_payload = 1 << 20;
    Client client("client.a", kClientKey, big);
    auto c = client.m.connect(server.addr, 3s);
    REQUIRE(c.ok());
    Message m = heartbeat(1);
    m.payload.resize(200000);  // over the server's 64 KiB
    REQUIRE(c.value()->send(m));
    REQUIRE(wait_for([&] { return client.n_closed() == 1; }));
    CHECK(!c.value()->is_open());
    REQUIRE(wait_for([&] { return server.n_closed() == 1; }));
    std::lock_guard lk(server.mu);
    CHECK_THAT(server.closed[0].second, Catch::Contains("payload too large"));
  }
  SECTION("a corrupted frame from an authenticated peer") {
    // Authenticate properly with a Messenger, then corrupt: impossible
    // through the API, so check the decoder error path via a handshake
    // frame type after auth, which must also close.
    Client client("client.a", kClientKey);
    auto c = client.m.connect(server.addr, 3s);
    REQUIRE(c.ok());
    Message m = heartbeat(1);
    m.type = kMsgAuthRequest;
    REQUIRE(c.value()->send(m));
    REQUIRE(wait_for([&] { return client.n_closed() == 1; }));
    REQUIRE(wait_for([&] { return server.n_closed() == 1; }));
    std::lock_guard lk(server.mu);
    CHECK_THAT(server.closed[0].second, Catch::Contains("handshake frame type 2 after authentication"));
  }
  good_client_works();
  CHECK(kept.value()->is_open());
  REQUIRE(kept.value()->send(heartbeat(9)));
  REQUIRE(wait_for([&] { return keeper.n_got() == 1; }));
  CHECK(server.messages >= 2);
}

TEST_CASE("a silent peer is dropped after the handshake timeout") {
  MessengerOptions opts;
  opts.handshake_timeout = 200ms;
  EchoServer server({{"client.a", kClientKey}}, opts);
  int fd = msgtest::raw_connect(server.addr);
  REQUIRE(fd >= 0);
  auto t0 = std::chrono::steady_clock::now();
  std::string got;
  CHECK(msgtest::wait_closed(fd, &got));
  auto took = std::chrono::steady_clock::now() - t0;
  ::close(fd);
  CHECK(took >= 150ms);
  CHECK(took < 3s);
  CHECK(got.size() > 32);  // the challenge came first
  CHECK(server.n_accepted() == 0);
}

TEST_CASE("connect gives up on a server that never answers") {
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(lfd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(lfd, 4) == 0);
  socklen_t len = sizeof sa;
  ::getsockname(lfd, reinterpret_cast<sockaddr *>(&sa), &len);
  std::string addr = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  Client client("client.a", kClientKey);
  auto t0 = std::chrono::steady_clock::now();
  auto r = client.m.connect(addr, 300ms);
  auto took = std::chrono::steady_clock::now() - t0;
  ::close(lfd);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == -ETIMEDOUT);
  CHECK(took < 1500ms);
}

TEST_CASE("connect to a closed port fails fast") {
  EchoServer server({});
  std::string addr = server.addr;
  server.m.stop();
  Client client("client.a", kClientKey);
  auto r = client.m.connect(addr, 2s);
  REQUIRE(!r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains(addr));
  CHECK(!client.m.connect("no-port", 1s).ok());
}

TEST_CASE("close runs on_close once on each side") {
  EchoServer server({{"client.a", kClientKey}});
  Client client("client.a", kClientKey);
  auto r = client.m.connect(server.addr);
  REQUIRE(r.ok());
  ConnectionRef c = r.value();
  REQUIRE(wait_for([&] { return server.n_accepted() == 1; }));
  c->close("test done");
  c->close("again");
  CHECK(!c->is_open());
  CHECK(!c->send(heartbeat(1)));
  REQUIRE(wait_for([&] { return client.n_closed() == 1 && server.n_closed() == 1; }));
  std::this_thread::sleep_for(100ms);
  CHECK(client.n_closed() == 1);
  CHECK(server.n_closed() == 1);
  std::lock_guard lk(client.mu);
  CHECK(client.close_reasons[0] == "test done");
}

TEST_CASE("stop closes every connection and runs on_close for each") {
  EchoServer server({{"client.a", kClientKey}});
  Client client("client.a", kClientKey);
  std::vector<ConnectionRef> conns;
  for (int i = 0; i < 3; ++i) {
    auto r = client.m.connect(server.addr);
    REQUIRE(r.ok());
    conns.push_back(r.value());
  }
  REQUIRE(wait_for([&] { return server.n_accepted() == 3; }));
  server.m.stop();
  CHECK(server.n_closed() == 3);
  REQUIRE(wait_for([&] { return client.n_closed() == 3; }));
  for (auto &c : conns) CHECK(!c->send(heartbeat(1)));
  CHECK(!client.m.connect(server.addr, 1s).ok());
}

TEST_CASE("a connection outliving its messenger is safe") {
  ConnectionRef kept;
  {
    EchoServer server({{"client.a", kClientKey}});
    Client client("client.a", kClientKey);
    auto r = client.m.connect(server.addr);
    REQUIRE(r.ok());
    kept = r.value();
  }
  CHECK(!kept->is_open());
  CHECK(!kept->send(heartbeat(1)));
  kept->close("late");
}

TEST_CASE("connect from a handler is refused instead of deadlocking") {
  EchoServer server({{"client.a", kClientKey}});
  Messenger m("client.a", kClientKey, nullptr, test_log());
  std::atomic<int> code{0};
  Handlers h;
  h.on_message = [&](const ConnectionRef &, Message &&) {
    auto r = m.connect(server.addr, 1s);
    code = r.ok() ? 1 : r.status().code();
  };
  m.set_handlers(h);
  m.start();
  auto r = m.connect(server.addr);
  REQUIRE(r.ok());
  r.value()->send(heartbeat(1));
  REQUIRE(wait_for([&] { return code != 0; }));
  CHECK(code == -EDEADLK);
}

TEST_CASE("a handler that throws closes only its connection") {
  Messenger server("osd.0", std::string(32, 's'), msgtest::lookup_from({{"client.a", kClientKey}}),
                   test_log());
  std::atomic<int> closes{0};
  Handlers h;
  h.on_message = [](const ConnectionRef &c, Message &&m) {
    int from = -1;  // no Catch macros here: this runs on an I/O thread
    (void)read_message<strata::wire::Heartbeat>(m, "hb", [&](strata::wire::Heartbeat::Reader r) {
      from = r.getFrom();
      return strata::Status::OK();
    });
    if (from == 666) throw std::runtime_error("boom");
    c->send(std::move(m));
  };
  h.on_close = [&](const ConnectionRef &, const std::string &reason) {
    if (reason.find("boom") != std::string::npos) ++closes;
  };
  server.set_handlers(h);
  auto addr = server.listen("127.0.0.1", 0);
  REQUIRE(addr.ok());
  server.start();
  Client bad("client.a", kClientKey), good("client.a", kClientKey);
  auto bc = bad.m.connect(addr.value());
  auto gc = good.m.connect(addr.value());
  REQUIRE(bc.ok());
  REQUIRE(gc.ok());
  bc.value()->send(heartbeat(666));
  REQUIRE(wait_for([&] { return bad.n_closed() == 1; }));
  CHECK(closes == 1);
  gc.value()->send(heartbeat(1));
  REQUIRE(wait_for([&] { return good.n_got() == 1; }));
  server.stop();
}

TEST_CASE("a thousand junk connections write one warning line, not a thousand") {
  std::FILE *logfile = std::tmpfile();
  REQUIRE(logfile != nullptr);
  strata::Logger log(STRATA_LOG_INFO, logfile);
  MessengerOptions opts;
  opts.unauthenticated_log_interval = std::chrono::hours(1);
  Messenger server("mon.a", std::string(32, 's'), msgtest::lookup_from({}), log, opts);
  server.set_handlers(Handlers{});
  auto addr = server.listen("127.0.0.1", 0);
  REQUIRE(addr.ok());
  server.start();
  for (int i = 0; i < 1000; ++i) {
    int fd = msgtest::raw_connect(*addr);
    REQUIRE(fd >= 0);
    msgtest::write_all(fd, std::string(64, 'J'));
    msgtest::wait_closed(fd);
    ::close(fd);
  }
  server.stop();
  std::fflush(logfile);
  long size = std::ftell(logfile);
  std::string text(static_cast<std::size_t>(size), '\0');
  std::rewind(logfile);
  REQUIRE(std::fread(text.data(), 1, text.size(), logfile) == text.size());
  std::fclose(logfile);
  INFO(text.substr(0, 2000));
  std::size_t warn_lines = 0, pos = 0;
  while ((pos = text.find("closed: bad frame", pos)) != std::string::npos) ++warn_lines, ++pos;
  CHECK(warn_lines == 1);
  CHECK(text.size() < 2048);
}

TEST_CASE("close_entity closes only that entity's connections and nothing more of theirs is "
          "delivered") {
  EchoServer server({{"client.a", kClientKey}, {"client.b", kOtherKey}});
  Client a("client.a", kClientKey), b("client.b", kOtherKey);
  auto ca = a.m.connect(server.addr, 3s);
  auto cb = b.m.connect(server.addr, 3s);
  REQUIRE(ca.ok());
  REQUIRE(cb.ok());
  REQUIRE(wait_for([&] { return server.n_accepted() == 2; }));

  CHECK(server.m.close_entity("client.a", "client.a's key was removed") == 1);
  int delivered = server.messages;
  ca.value()->send(heartbeat(1));  // may still reach the socket; must not reach the handler
  REQUIRE(wait_for([&] { return a.n_closed() == 1; }));
  CHECK(server.messages == delivered);

  REQUIRE(cb.value()->send(heartbeat(2)));
  REQUIRE(wait_for([&] { return b.n_got() == 1; }));
  CHECK(server.m.close_entity("client.nobody", "no such key") == 0);
}
