#include "nbd_socket.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "strata/cpp/plugin_support.hpp"

namespace strata::rbd::nbd {

namespace {

constexpr int kListenBacklog = 128;
constexpr int kSendTimeoutSeconds = 60;

[[noreturn]] void fail(int err, const std::string &what, const std::string &addr) {
  throw sdk::make_error(-err, "nbd: %s %s: %s", what.c_str(), addr.c_str(), std::strerror(err));
}

}  // namespace

int listen_unix(const std::string &unix_path, std::string *bound) {
  sockaddr_un sa{};
  if (unix_path.empty() || unix_path.size() >= sizeof(sa.sun_path)) fail(ENAMETOOLONG, "listen", unix_path);
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, unix_path.c_str(), unix_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(errno, "socket", unix_path);
  // A socket file left by a server that died is in the way of bind; one
  // that somebody still listens on is not ours to take.
  if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0) {
    ::close(fd);
    fail(EADDRINUSE, "listen", unix_path);
  }
  ::unlink(unix_path.c_str());
  ::close(fd);
  fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(errno, "socket", unix_path);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0 ||
      ::listen(fd, kListenBacklog) != 0) {
    int err = errno;
    ::close(fd);
    fail(err, "listen", unix_path);
  }
  *bound = "unix:" + unix_path;
  return fd;
}

int listen_tcp(const std::string &tcp_listen, std::string *bound) {
  auto colon = tcp_listen.rfind(':');
  if (colon == std::string::npos) fail(EINVAL, "listen (want HOST:PORT)", tcp_listen);
  std::string host = tcp_listen.substr(0, colon), port = tcp_listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int gai = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
  if (gai != 0) throw sdk::make_error(-EINVAL, "nbd: listen %s: %s", tcp_listen.c_str(), gai_strerror(gai));
  int fd = -1, err = EADDRNOTAVAIL;
  for (addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) fail(err, "listen", tcp_listen);
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len);
  char name[INET6_ADDRSTRLEN] = "?";
  unsigned real_port = 0;
  if (ss.ss_family == AF_INET6) {
    auto *s6 = reinterpret_cast<sockaddr_in6 *>(&ss);
    ::inet_ntop(AF_INET6, &s6->sin6_addr, name, sizeof(name));
    real_port = ntohs(s6->sin6_port);
    *bound = "[" + std::string(name) + "]:" + std::to_string(real_port);
  } else {
    auto *s4 = reinterpret_cast<sockaddr_in *>(&ss);
    ::inet_ntop(AF_INET, &s4->sin_addr, name, sizeof(name));
    real_port = ntohs(s4->sin_port);
    *bound = std::string(name) + ":" + std::to_string(real_port);
  }
  return fd;
}

void tune_connection(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len) == 0 &&
      (ss.ss_family == AF_INET || ss.ss_family == AF_INET6)) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  timeval tv{kSendTimeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int read_exact(int fd, void *buf, size_t n, int stop_fd, Clock::time_point deadline) {
  auto *p = static_cast<char *>(buf);
  while (n > 0) {
    int timeout_ms = -1;
    if (deadline != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return -ETIMEDOUT;
      timeout_ms = int(std::min<long long>(left, 1 << 30));
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int r = ::poll(fds, 2, timeout_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) continue;  // the deadline check above ends it
    if (fds[1].revents) return -ESHUTDOWN;
    ssize_t got = ::recv(fd, p, n, MSG_DONTWAIT);
    if (got == 0) return -ECONNRESET;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return -errno;
    }
    p += got;
    n -= size_t(got);
  }
  return 0;
}

int write_all(int fd, const iovec *iov, int count) {
  std::vector<iovec> left(iov, iov + count);
  size_t first = 0;
  while (first < left.size()) {
    msghdr msg{};
    msg.msg_iov = left.data() + first;
    msg.msg_iovlen = std::min<size_t>(left.size() - first, IOV_MAX);
    ssize_t sent = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    auto done = size_t(sent);
    while (first < left.size() && done >= left[first].iov_len) done -= left[first++].iov_len;
    if (first < left.size()) {
      left[first].iov_base = static_cast<char *>(left[first].iov_base) + done;
      left[first].iov_len -= done;
    }
  }
  return 0;
}

int write_all(int fd, const void *buf, size_t n) {
  iovec iov{const_cast<void *>(buf), n};
  return write_all(fd, &iov, 1);
}

}  // namespace strata::rbd::nbd
