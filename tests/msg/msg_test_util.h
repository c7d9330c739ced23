// Shared bits of the messenger tests: keys, waiting, raw sockets.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "msg/keyring.h"
#include "msg/messenger.h"

namespace msgtest {

// Waits up to `ms` for cond(); returns its last value.
inline bool wait_for(const std::function<bool()> &cond, int ms = 5000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return cond();
}

inline strata::msg::SecretLookup lookup_from(std::map<std::string, std::string> keys) {
  return [keys](const std::string &e) -> std::optional<std::string> {
    auto it = keys.find(e);
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
}

// A plain blocking TCP socket to "127.0.0.1:port"; -1 on failure.
inline int raw_connect(const std::string &address) {
  auto colon = address.rfind(':');
  int port = std::stoi(address.substr(colon + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

inline bool write_all(int fd, const std::string &s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads until the peer closes (returns true) or the 10 s receive timeout.
inline bool wait_closed(int fd, std::string *got = nullptr) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    if (got) got->append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace msgtest
