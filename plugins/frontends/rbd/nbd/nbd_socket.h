// Socket plumbing for the NBD server: listening on a Unix path or TCP
// address, reading exactly n bytes (with a deadline, and giving up when
// the server stops), and writing whole replies without SIGPIPE.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace strata::rbd::nbd {

using Clock = std::chrono::steady_clock;

// Listens on `unix_path` (replacing a stale socket file) or on
// `tcp_listen` ("HOST:PORT"). Returns the fd and sets *bound to
// "unix:/path" or "HOST:PORT" with the real port; throws
// strata::sdk::Error naming the address when it cannot.
int listen_unix(const std::string &unix_path, std::string *bound);
int listen_tcp(const std::string &tcp_listen, std::string *bound);

// Per-connection socket options: TCP_NODELAY on TCP, and a send timeout
// so a client that never reads its replies cannot pin a writer forever.
void tune_connection(int fd);

// Reads exactly n bytes. 0, or -ECONNRESET (peer closed, even mid-way),
// -ETIMEDOUT (deadline passed), -ESHUTDOWN (stop_fd became readable: the
// server is stopping), or another -errno. Clock::time_point::max() means
// no deadline.
int read_exact(int fd, void *buf, size_t n, int stop_fd, Clock::time_point deadline);

// Writes every byte of iov[0..count) with MSG_NOSIGNAL. 0 or -errno.
int write_all(int fd, const iovec *iov, int count);
int write_all(int fd, const void *buf, size_t n);

}  // namespace strata::rbd::nbd
