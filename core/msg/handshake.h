// The authentication handshake as two small state machines, free of
// sockets so they can be tested and fuzzed directly. The messenger feeds
// them the frames it receives and sends what they return.
//
//   acceptor                          connector
//   AuthChallenge(nonce_s, entity_s) ->
//                                  <- AuthRequest(entity_c, nonce_c, client proof)
//   AuthReply(server proof)          ->   (or AuthError(reason), then close)
//
// Proofs: auth.h. Before the handshake completes, nothing but these frames
// is accepted (the messenger also caps their size, see kHandshakeLimits).
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "msg/frame.h"
#include "msg/messenger.h"

namespace strata::msg {

// Frame limits while unauthenticated: handshake messages are tiny, so an
// unauthenticated peer cannot make us allocate much.
inline constexpr FrameLimits kHandshakeLimits{4096, 0, 0};
inline constexpr std::size_t kMaxEntityLength = 256;

class ServerHandshake {
 public:
  ServerHandshake(std::string self, const SecretLookup *lookup);

  // The first frame to send.
  Message challenge();

  struct Outcome {
    bool ok = false;
    Message reply;            // AuthReply on success, AuthError on failure
    std::string peer_entity;  // who authenticated (or claimed to, on failure)
    std::string reason;       // why it failed, for the log
  };
  // The connector's AuthRequest (or anything else, which fails).
  Outcome on_frame(const Message &m);

 private:
  Outcome refuse(std::string reason, std::string entity, std::string told_peer);
  std::string self_;
  const SecretLookup *lookup_;
  std::string server_nonce_;
};

class ClientHandshake {
 public:
  ClientHandshake(std::string self, std::string secret);

  // The acceptor's AuthChallenge -> the AuthRequest to send.
  Result<Message> on_challenge(const Message &m);
  // The acceptor's AuthReply (OK when its proof checks out) or AuthError.
  Status on_reply(const Message &m);
  const std::string &server_entity() const { return server_entity_; }

 private:
  std::string self_;
  std::string secret_;
  std::string server_nonce_, client_nonce_, server_entity_;
};

// The AuthError frame carrying `reason` (also used for a handshake timeout).
Message make_auth_error(const std::string &reason);
bool valid_entity_name(const std::string &entity);

}  // namespace strata::msg
