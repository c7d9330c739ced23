// NbdServer: the listening socket, the accept thread, and the set of
// connections (each with its reader thread) until stop().
#include "nbd_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <system_error>
#include <thread>

#include "nbd_connection.h"
#include "nbd_context.h"
#include "nbd_socket.h"
#include "strata/cpp/plugin_support.hpp"

namespace strata::rbd {

namespace {

using nbd::Connection;
using nbd::ServerContext;

class Server final : public NbdServer {
 public:
  // listen: bind opts' address and accept; otherwise only adopt().
  Server(std::vector<NbdExport> exports, NbdServerOptions opts, bool listen);
  ~Server() override { stop(); }

  void stop() override;
  int adopt(int fd) override;
  std::string bound_address() const override { return bound_; }
  NbdServerStats stats() const override { return ctx_.stats.snapshot(); }

 private:
  struct Slot {
    std::shared_ptr<Connection> conn;
    std::thread reader;
  };

  void accept_loop();
  void reap_finished();  // REQUIRES: conns_mu_ held
  // Starts serving connected socket `fd` (owned from here on). REQUIRES:
  // conns_mu_ held. 0, -EMFILE (too many) or -EAGAIN (no thread).
  int serve_connection(int fd);

  ServerContext ctx_;
  std::string bound_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};  // [1] is written once at stop; [0] is ctx_.stop_fd
  std::thread acceptor_;
  std::mutex conns_mu_;
  bool stopped_ = false;  // GUARDED_BY(conns_mu_)
  std::list<Slot> conns_;  // GUARDED_BY(conns_mu_)
};

Server::Server(std::vector<NbdExport> exports, NbdServerOptions opts, bool listen) {
  if (exports.empty()) throw sdk::Error(-EINVAL, "nbd: no export to serve");
  for (const auto &e : exports)
    if (!e.device) throw sdk::make_error(-EINVAL, "nbd: export '%s' has no device", e.name.c_str());
  if (listen && opts.unix_path.empty() == opts.tcp_listen.empty())
    throw sdk::Error(-EINVAL, "nbd: give exactly one of a Unix socket path and a TCP address");
  if (!listen && !(opts.unix_path.empty() && opts.tcp_listen.empty()))
    throw sdk::Error(-EINVAL, "nbd: a server that listens nowhere takes no address");
  // A read reply's data chunk carries its length in 32 bits with the offset.
  if (opts.max_payload == 0 || opts.max_payload > (1u << 30))
    throw sdk::make_error(-EINVAL, "nbd: max_payload %u outside 1..1 GiB", opts.max_payload);
  ctx_.exports = std::move(exports);
  ctx_.opts = std::move(opts);
  if (listen)
    listen_fd_ = ctx_.opts.unix_path.empty() ? nbd::listen_tcp(ctx_.opts.tcp_listen, &bound_)
                                             : nbd::listen_unix(ctx_.opts.unix_path, &bound_);
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    int err = errno;
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw sdk::make_error(-err, "nbd: pipe: %s", std::strerror(err));
  }
  ctx_.stop_fd = stop_pipe_[0];
  if (!listen) return;
  ctx_.log(nbd::kLogInfo, "nbd: listening on %s", bound_.c_str());
  acceptor_ = std::thread([this] { accept_loop(); });
}

void Server::accept_loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {ctx_.stop_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      ctx_.log(nbd::kLogError, "nbd: poll: %s", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: back off instead of spinning on the backlog.
        ctx_.log(nbd::kLogWarning, "nbd: accept: %s", std::strerror(errno));
        ::poll(nullptr, 0, 100);
      }
      continue;
    }
    std::lock_guard<std::mutex> l(conns_mu_);
    serve_connection(fd);
  }
}

int Server::serve_connection(int fd) {
  reap_finished();
  if (conns_.size() >= ctx_.opts.max_connections) {
    ctx_.log(nbd::kLogWarning, "nbd: %zu connections open, refusing one more", conns_.size());
    ::close(fd);
    return -EMFILE;
  }
  nbd::tune_connection(fd);
  auto conn = std::make_shared<Connection>(fd, ctx_);
  try {
    conns_.push_back({conn, std::thread([conn] { conn->run(); })});
  } catch (const std::system_error &e) {
    // No thread to serve it: the connection closes with `conn`.
    ctx_.log(nbd::kLogError, "nbd: no thread for a connection: %s", e.what());
    ctx_.stats.connections_open--;
    return -EAGAIN;
  }
  return 0;
}

int Server::adopt(int fd) {
  std::lock_guard<std::mutex> l(conns_mu_);
  if (stopped_) {
    ::close(fd);
    return -ESHUTDOWN;
  }
  return serve_connection(fd);
}

void Server::reap_finished() {
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (it->conn->finished()) {
      it->reader.join();
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> l(conns_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  // One byte, never read: the pipe stays readable, so every poll on it —
  // the acceptor's, each reader's — wakes now and from now on.
  char b = 1;
  while (::write(stop_pipe_[1], &b, 1) < 0 && errno == EINTR) {
  }
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (!ctx_.opts.unix_path.empty()) ::unlink(ctx_.opts.unix_path.c_str());
  // Each reader waits for its requests in flight and their replies.
  std::list<Slot> conns;
  {
    std::lock_guard<std::mutex> l(conns_mu_);
    conns.swap(conns_);
  }
  for (auto &slot : conns) slot.reader.join();
  conns.clear();
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
  if (listen_fd_ >= 0) ctx_.log(nbd::kLogInfo, "nbd: stopped serving on %s", bound_.c_str());
}

}  // namespace

std::unique_ptr<NbdServer> NbdServer::start(std::vector<NbdExport> exports, NbdServerOptions opts) {
  return std::make_unique<Server>(std::move(exports), std::move(opts), true);
}

std::unique_ptr<NbdServer> NbdServer::start_unlistening(std::vector<NbdExport> exports,
                                                        NbdServerOptions opts) {
  return std::make_unique<Server>(std::move(exports), std::move(opts), false);
}

}  // namespace strata::rbd
