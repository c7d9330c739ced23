# The messenger's own handshake (frame types 1..4 in message_types.h): a
# mutual HMAC-SHA256 challenge-response on the connecting entity's secret.
# Only the messenger reads these; handlers never see them. See auth.h for
# what each proof covers.
@0xafd6164fe559aa8c;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("strata::msg::hs");

# acceptor -> connector, first frame on every connection.
struct AuthChallenge {
  serverNonce @0 :Data;       # 32 random bytes
  serverEntity @1 :Text;      # "mon", "osd.3"
  protocolVersion @2 :UInt32;
}

# connector -> acceptor.
struct AuthRequest {
  entity @0 :Text;            # who the connector claims to be
  clientNonce @1 :Data;       # 32 random bytes
  proof @2 :Data;             # auth.h client_proof()
  protocolVersion @3 :UInt32;
}

# acceptor -> connector: the acceptor knows the connector's secret too.
struct AuthReply {
  proof @0 :Data;             # auth.h server_proof()
}

# acceptor -> connector, then the acceptor closes.
struct AuthError {
  reason @0 :Text;
}
