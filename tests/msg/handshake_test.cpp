// The handshake state machines and proofs, without sockets.
#include <catch2/catch.hpp>

#include <map>

#include "msg/auth.h"
#include "msg/handshake.h"
#include "msg/message_types.h"
#include "msg/schema/handshake.capnp.h"
#include "msg/wire_codec.h"

using namespace strata::msg;
using strata::Status;

namespace {
std::string hex(const std::string &s) {
  static const char *d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}
SecretLookup keys(std::map<std::string, std::string> m) {
  return [m](const std::string &e) -> std::optional<std::string> {
    auto it = m.find(e);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}
const std::string kKey(32, 'a');
}  // namespace

TEST_CASE("HMAC-SHA256 matches RFC 4231 test case 2") {
  CHECK(hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("proofs differ by direction, nonce and entity") {
  std::string sn(32, '1'), cn(32, '2');
  auto c = client_proof(kKey, sn, cn, "client.a");
  CHECK(c.size() == kProofBytes);
  CHECK(c != server_proof(kKey, cn, sn, "client.a"));
  CHECK(c != client_proof(kKey, cn, sn, "client.a"));
  CHECK(c != client_proof(kKey, sn, cn, "client.b"));
  CHECK(c != client_proof(std::string(32, 'b'), sn, cn, "client.a"));
  CHECK(proofs_equal(c, client_proof(kKey, sn, cn, "client.a")));
  CHECK(!proofs_equal(c, c.substr(1)));
  CHECK(random_nonce() != random_nonce());
}

TEST_CASE("handshake succeeds with the right key") {
  auto lookup = keys({{"client.a", kKey}});
  ServerHandshake server("osd.1", &lookup);
  ClientHandshake client("client.a", kKey);
  auto req = client.on_challenge(server.challenge());
  REQUIRE(req.ok());
  CHECK(client.server_entity() == "osd.1");
  auto out = server.on_frame(req.value());
  REQUIRE(out.ok);
  CHECK(out.peer_entity == "client.a");
  CHECK(out.reply.type == kMsgAuthReply);
  CHECK(client.on_reply(out.reply).ok());
}

TEST_CASE("handshake failures") {
  auto lookup = keys({{"client.a", kKey}});
  SECTION("client with the wrong key") {
    ServerHandshake server("osd.1", &lookup);
    ClientHandshake client("client.a", std::string(32, 'w'));
    auto out = server.on_frame(client.on_challenge(server.challenge()).value());
    CHECK(!out.ok);
    CHECK_THAT(out.reason, Catch::Contains("wrong key for client.a"));
    CHECK(out.reply.type == kMsgAuthError);
    Status s = client.on_reply(out.reply);
    CHECK(s.code() == -EACCES);
    CHECK_THAT(s.message(), Catch::Contains("authentication failed"));
  }
  SECTION("unknown entity") {
    ServerHandshake server("osd.1", &lookup);
    ClientHandshake client("client.zz", kKey);
    auto out = server.on_frame(client.on_challenge(server.challenge()).value());
    CHECK(!out.ok);
    CHECK_THAT(out.reason, Catch::Contains("unknown entity client.zz"));
  }
  SECTION("no lookup at all") {
    ServerHandshake server("osd.1", nullptr);
    ClientHandshake client("client.a", kKey);
    CHECK(!server.on_frame(client.on_challenge(server.challenge()).value()).ok);
  }
  SECTION("server with a different key for the client") {
    auto other = keys({{"client.a", std::string(32, 'o')}});
    ServerHandshake server("osd.1", &other);
    ClientHandshake client("client.a", kKey);
    CHECK(!server.on_frame(client.on_challenge(server.challenge()).value()).ok);
  }
  SECTION("a reply replayed from another connection") {
    ServerHandshake s1("osd.1", &lookup), s2("osd.1", &lookup);
    ClientHandshake c1("client.a", kKey), c2("client.a", kKey);
    auto r1 = s1.on_frame(c1.on_challenge(s1.challenge()).value());
    REQUIRE(r1.ok);
    (void)c2.on_challenge(s2.challenge());
    CHECK_THAT(c2.on_reply(r1.reply).message(), Catch::Contains("failed to prove"));
  }
  SECTION("a request replayed to a new challenge") {
    ServerHandshake s1("osd.1", &lookup), s2("osd.1", &lookup);
    ClientHandshake c1("client.a", kKey);
    auto req = c1.on_challenge(s1.challenge()).value();
    (void)s2.challenge();
    CHECK(!s2.on_frame(req).ok);
  }
  SECTION("the server's entity is bound into its proof") {
    ServerHandshake server("osd.1", &lookup);
    ClientHandshake client("client.a", kKey);
    // Relabel the challenge as coming from "mon".
    Message ch = server.challenge();
    std::string nonce;
    REQUIRE(read_message<hs::AuthChallenge>(ch, "c", [&](hs::AuthChallenge::Reader r) {
              nonce = std::string(reinterpret_cast<const char *>(r.getServerNonce().begin()), 32);
              return Status::OK();
            }).ok());
    capnp::MallocMessageBuilder b;
    auto c = b.initRoot<hs::AuthChallenge>();
    c.setServerNonce(capnp::Data::Reader(reinterpret_cast<const kj::byte *>(nonce.data()), 32));
    c.setServerEntity("mon");
    c.setProtocolVersion(kProtocolVersion);
    auto out = server.on_frame(client.on_challenge(make_message(kMsgAuthChallenge, b)).value());
    REQUIRE(out.ok);
    CHECK(!client.on_reply(out.reply).ok());
  }
  SECTION("wrong frame types and malformed frames") {
    ServerHandshake server("osd.1", &lookup);
    ClientHandshake client("client.a", kKey);
    Message junk;
    junk.type = kMsgAuthRequest;
    junk.payload = "12345678";
    CHECK(!server.on_frame(junk).ok);
    CHECK(!server.on_frame(server.challenge()).ok);
    Message user;
    user.type = 32;
    CHECK(!server.on_frame(user).ok);
    CHECK(!client.on_challenge(user).ok());
    CHECK(!client.on_challenge(junk).ok());
    Message with_seg = server.challenge();
    with_seg.segments.push_back("x");
    CHECK(!client.on_challenge(with_seg).ok());
    auto refused = client.on_challenge(make_auth_error("go away"));
    CHECK_THAT(refused.status().message(), Catch::Contains("go away"));
  }
}
