#include "msg/handshake.h"

#include "msg/auth.h"
#include "msg/message_types.h"
#include "msg/schema/handshake.capnp.h"
#include "msg/wire_codec.h"

namespace strata::msg {

namespace {

std::string as_string(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char *>(d.begin()), d.size());
}
capnp::Data::Reader as_data(const std::string &s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte *>(s.data()), s.size());
}
std::string type_name(uint16_t t) {
  switch (t) {
    case kMsgAuthChallenge: return "AuthChallenge";
    case kMsgAuthRequest: return "AuthRequest";
    case kMsgAuthReply: return "AuthReply";
    case kMsgAuthError: return "AuthError";
    default: return "frame type " + std::to_string(t);
  }
}
// Handshake messages carry no data segments.
Status check_plain(const Message &m, uint16_t want) {
  if (m.type != want)
    return Status::Error(EPROTO, "expected " + type_name(want) + ", got " + type_name(m.type));
  if (!m.segments.empty())
    return Status::Error(EPROTO, type_name(want) + " with data segments");
  return Status::OK();
}

}  // namespace

bool valid_entity_name(const std::string &e) {
  if (e.empty() || e.size() > kMaxEntityLength) return false;
  for (char c : e)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

Message make_auth_error(const std::string &reason) {
  capnp::MallocMessageBuilder b;
  b.initRoot<hs::AuthError>().setReason(reason);
  return make_message(kMsgAuthError, b);
}

ServerHandshake::ServerHandshake(std::string self, const SecretLookup *lookup)
    : self_(std::move(self)), lookup_(lookup), server_nonce_(random_nonce()) {}

Message ServerHandshake::challenge() {
  capnp::MallocMessageBuilder b;
  auto c = b.initRoot<hs::AuthChallenge>();
  c.setServerNonce(as_data(server_nonce_));
  c.setServerEntity(self_);
  c.setProtocolVersion(kProtocolVersion);
  return make_message(kMsgAuthChallenge, b);
}

ServerHandshake::Outcome ServerHandshake::refuse(std::string reason, std::string entity,
                                                 std::string told_peer) {
  Outcome o;
  o.ok = false;
  o.reason = std::move(reason);
  o.peer_entity = std::move(entity);
  o.reply = make_auth_error(told_peer);
  return o;
}

ServerHandshake::Outcome ServerHandshake::on_frame(const Message &m) {
  Status s = check_plain(m, kMsgAuthRequest);
  if (!s.ok()) return refuse(s.message(), "", s.message());
  std::string entity, client_nonce, proof;
  uint32_t version = 0;
  s = read_message<hs::AuthRequest>(m, "AuthRequest", [&](hs::AuthRequest::Reader r) {
    entity = r.getEntity();
    client_nonce = as_string(r.getClientNonce());
    proof = as_string(r.getProof());
    version = r.getProtocolVersion();
    return Status::OK();
  });
  if (!s.ok()) return refuse(s.message(), "", "malformed AuthRequest");
  if (!valid_entity_name(entity)) return refuse("bad entity name", "", "bad entity name");
  if (version != kProtocolVersion)
    return refuse("unsupported protocol version " + std::to_string(version), entity,
                  "unsupported protocol version " + std::to_string(version) + " (server speaks " +
                      std::to_string(kProtocolVersion) + ")");
  if (client_nonce.size() != kNonceBytes || proof.size() != kProofBytes)
    return refuse("malformed AuthRequest (nonce or proof size)", entity, "malformed AuthRequest");
  std::optional<std::string> secret;
  if (lookup_ && *lookup_) secret = (*lookup_)(entity);
  // Same answer to the peer for an unknown entity and a wrong key, so it
  // cannot probe which entities exist; the log says which it was.
  if (!secret) return refuse("unknown entity " + entity, entity, "authentication failed");
  std::string want = client_proof(*secret, server_nonce_, client_nonce, entity);
  if (!proofs_equal(want, proof))
    return refuse("wrong key for " + entity + " (proof mismatch)", entity,
                  "authentication failed");
  Outcome o;
  o.ok = true;
  o.peer_entity = entity;
  capnp::MallocMessageBuilder b;
  std::string sp = server_proof(*secret, client_nonce, server_nonce_, self_);
  b.initRoot<hs::AuthReply>().setProof(as_data(sp));
  o.reply = make_message(kMsgAuthReply, b);
  return o;
}

ClientHandshake::ClientHandshake(std::string self, std::string secret)
    : self_(std::move(self)), secret_(std::move(secret)) {}

Result<Message> ClientHandshake::on_challenge(const Message &m) {
  if (m.type == kMsgAuthError) {
    Status s = on_reply(m);  // the acceptor refused before challenging (e.g. shutting down)
    return s.ok() ? Status::Error(EPROTO, "unexpected AuthError") : s;
  }
  Status s = check_plain(m, kMsgAuthChallenge);
  if (!s.ok()) return s;
  uint32_t version = 0;
  s = read_message<hs::AuthChallenge>(m, "AuthChallenge", [&](hs::AuthChallenge::Reader r) {
    server_nonce_ = as_string(r.getServerNonce());
    server_entity_ = r.getServerEntity();
    version = r.getProtocolVersion();
    return Status::OK();
  });
  if (!s.ok()) return s;
  if (version < kProtocolVersion)
    return Status::Error(EPROTO, "server speaks protocol version " + std::to_string(version) +
                                     ", need " + std::to_string(kProtocolVersion));
  if (server_nonce_.size() != kNonceBytes)
    return Status::Error(EPROTO, "AuthChallenge nonce is " + std::to_string(server_nonce_.size()) +
                                     " bytes, expected " + std::to_string(kNonceBytes));
  if (!valid_entity_name(server_entity_))
    return Status::Error(EPROTO, "AuthChallenge with a bad server entity name");
  client_nonce_ = random_nonce();
  capnp::MallocMessageBuilder b;
  auto r = b.initRoot<hs::AuthRequest>();
  r.setEntity(self_);
  r.setClientNonce(as_data(client_nonce_));
  std::string proof = client_proof(secret_, server_nonce_, client_nonce_, self_);
  r.setProof(as_data(proof));
  r.setProtocolVersion(kProtocolVersion);
  return make_message(kMsgAuthRequest, b);
}

Status ClientHandshake::on_reply(const Message &m) {
  if (m.type == kMsgAuthError) {
    std::string reason;
    Status s = read_message<hs::AuthError>(m, "AuthError", [&](hs::AuthError::Reader r) {
      reason = r.getReason();
      return Status::OK();
    });
    if (!s.ok()) return s;
    return Status::Error(EACCES, "refused by the server: " + reason);
  }
  Status s = check_plain(m, kMsgAuthReply);
  if (!s.ok()) return s;
  std::string proof;
  s = read_message<hs::AuthReply>(m, "AuthReply", [&](hs::AuthReply::Reader r) {
    proof = as_string(r.getProof());
    return Status::OK();
  });
  if (!s.ok()) return s;
  std::string want = server_proof(secret_, client_nonce_, server_nonce_, server_entity_);
  if (!proofs_equal(want, proof))
    return Status::Error(EACCES, "server " + server_entity_ +
                                     " failed to prove it knows our key (wrong key on one side?)");
  return Status::OK();
}

}  // namespace strata::msg
