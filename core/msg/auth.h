// The proofs of the messenger's challenge-response (see handshake.h).
// Both sides prove they know the CONNECTING entity's secret:
//
//   client proof = HMAC-SHA256(secret, "strata-auth-v1 c" | server_nonce |
//                                      client_nonce | client_entity)
//   server proof = HMAC-SHA256(secret, "strata-auth-v1 s" | client_nonce |
//                                      server_nonce | server_entity)
//
// Nonces are 32 random bytes from each side, so neither proof can be
// replayed on another connection; the distinct prefixes stop one proof
// being reflected as the other. The entity is last, after fixed-size
// fields, so the MAC input is unambiguous. The server proof also binds the
// server's entity name, so the connector can trust peer_entity().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::msg {

inline constexpr std::size_t kNonceBytes = 32;
inline constexpr std::size_t kProofBytes = 32;
inline constexpr uint32_t kProtocolVersion = 1;

std::string hmac_sha256(std::string_view key, std::string_view data);
std::string random_nonce();  // kNonceBytes from getrandom
std::string client_proof(std::string_view secret, std::string_view server_nonce,
                         std::string_view client_nonce, std::string_view client_entity);
std::string server_proof(std::string_view secret, std::string_view client_nonce,
                         std::string_view server_nonce, std::string_view server_entity);
// Constant-time comparison (CRYPTO_memcmp); false when the sizes differ.
bool proofs_equal(std::string_view a, std::string_view b);

}  // namespace strata::msg
