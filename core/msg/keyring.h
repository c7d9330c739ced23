// Per-entity secrets. A keyring file is INI-like:
//
//   [client.admin]
//   key = <base64 of 32 random bytes>
//
// Entity names are "<type>.<id>": client.NAME, osd.N, mon. A daemon's
// keyring holds its own key; the monitor's holds every key (it is the
// authority and hands OSDs the keys they need to verify peers).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/status.h"

namespace strata::msg {

class Keyring {
 public:
  static Result<Keyring> load_file(const std::string &path);
  static Result<Keyring> parse(const std::string &text, const std::string &source_name);

  std::optional<std::string> secret(const std::string &entity) const;  // raw bytes
  void set(const std::string &entity, std::string secret);
  bool empty() const { return keys_.empty(); }
  const std::map<std::string, std::string> &entries() const { return keys_; }

  // The file form; write_file creates it mode 0600.
  std::string to_text() const;
  Status write_file(const std::string &path) const;

  // 32 random bytes from the OS.
  static std::string generate_secret();

 private:
  std::map<std::string, std::string> keys_;
};

}  // namespace strata::msg
