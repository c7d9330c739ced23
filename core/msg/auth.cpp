#include "msg/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "msg/keyring.h"

namespace strata::msg {

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char *>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char *>(out), len);
}

std::string random_nonce() {
  // Same source as the keys: the kernel's CSPRNG.
  std::string n = Keyring::generate_secret();
  n.resize(kNonceBytes);
  return n;
}

std::string client_proof(std::string_view secret, std::string_view server_nonce,
                         std::string_view client_nonce, std::string_view client_entity) {
  std::string in = "strata-auth-v1 c";
  in.append(server_nonce).append(client_nonce).append(client_entity);
  return hmac_sha256(secret, in);
}

std::string server_proof(std::string_view secret, std::string_view client_nonce,
                         std::string_view server_nonce, std::string_view server_entity) {
  std::string in = "strata-auth-v1 s";
  in.append(client_nonce).append(server_nonce).append(server_entity);
  return hmac_sha256(secret, in);
}

bool proofs_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace strata::msg
