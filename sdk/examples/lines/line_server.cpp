#include "line_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "protocol.h"
#include "strata/cpp/plugin_support.hpp"
#include "strata/frontend_client.h"

namespace lines {

using strata::sdk::make_error;

namespace {

sockaddr_in parse_address(const std::string &listen) {
  size_t colon = listen.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  char *end = nullptr;
  unsigned long port =
      colon == std::string::npos ? 70000 : std::strtoul(listen.c_str() + colon + 1, &end, 10);
  std::string host = listen.substr(0, colon == std::string::npos ? 0 : colon);
  if (port > 65535 || (end && *end) || inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    throw make_error(EINVAL, "listen = '%s' is not IPV4:PORT (e.g. 127.0.0.1:7390)",
                     listen.c_str());
  addr.sin_port = htons(uint16_t(port));
  return addr;
}

// Written under a temporary name and renamed, so that a reader never sees
// a partial port number.
void write_port_file(const std::string &path, unsigned port) {
  std::string tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f) throw make_error(errno, "port_file %s: %s", tmp.c_str(), std::strerror(errno));
  bool ok = std::fprintf(f, "%u\n", port) > 0;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
    throw make_error(EIO, "port_file %s: cannot write it: %s", path.c_str(), std::strerror(errno));
}

bool send_all(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace

LineServer::LineServer(const strata_frontend_host *host, strata_cluster_t cluster,
                       Settings settings)
    : strata_api(host->client), host_(host), settings_(std::move(settings)) {
  try {
    if (int rc = strata_ioctx_create(cluster, settings_.pool.c_str(), &io_); rc < 0)
      throw make_error(rc, "pool '%s': %s", settings_.pool.c_str(), strata_last_error());
    sockaddr_in addr = parse_address(settings_.listen);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw make_error(errno, "socket: %s", std::strerror(errno));
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 64) != 0)
      throw make_error(errno, "listening on %s: %s", settings_.listen.c_str(),
                       std::strerror(errno));
    socklen_t addr_len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&addr), &addr_len);
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
    address_ = std::string(ip) + ":" + std::to_string(ntohs(addr.sin_port));
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
    if (wake_fd_ < 0) throw make_error(errno, "eventfd: %s", std::strerror(errno));
    if (!settings_.port_file.empty()) write_port_file(settings_.port_file, ntohs(addr.sin_port));
    thread_ = std::thread([this] { serve(); });
  } catch (...) {
    stop();
    throw;
  }
  log(STRATA_LOG_INFO, "serving " + address_ + " for pool '" + settings_.pool + "'");
}

LineServer::~LineServer() { stop(); }

void LineServer::stop() {
  if (thread_.joinable()) {
    stopping_ = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  for (auto &[fd, client] : clients_) ::close(fd);
  clients_.clear();
  connections_open_ = 0;
  for (int *fd : {&listen_fd_, &wake_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (!settings_.port_file.empty() && !address_.empty()) std::remove(settings_.port_file.c_str());
  if (io_) strata_ioctx_destroy(io_);
  io_ = nullptr;
}

void LineServer::log(int level, const std::string &msg) const {
  host_->log(host_->ctx, level, msg.c_str());
}

void LineServer::serve() {
  std::vector<pollfd> fds;
  while (!stopping_) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto &[fd, client] : clients_) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      // Serving cannot go on: say so and let the host stop us.
      std::string why = std::string("lines: poll failed: ") + std::strerror(errno);
      host_->request_stop(host_->ctx, -errno, why.c_str());
      return;
    }
    if (fds[0].revents) return;
    if (fds[1].revents) accept_clients();
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto it = clients_.find(fds[i].fd);
      if (read_from(it->first, it->second)) continue;
      ::close(it->first);
      clients_.erase(it);
      --connections_open_;
    }
  }
}

void LineServer::accept_clients() {
  int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) return;
    log(STRATA_LOG_WARN, std::string("accept on ") + address_ + ": " + std::strerror(errno));
    return;
  }
  clients_.emplace(fd, Client{});
  ++connections_total_;
  ++connections_open_;
}

bool LineServer::read_from(int fd, Client &c) {
  char buf[4096];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  c.in.append(buf, size_t(n));
  size_t nl;
  while ((nl = c.in.find('\n')) != std::string::npos) {
    std::string line = c.in.substr(0, nl);
    c.in.erase(0, nl + 1);
    bool close = false;
    if (!send_all(fd, handle(line, &close) + "\n") || close) return false;
  }
  if (c.in.size() > settings_.max_line) {
    ++errors_;
    send_all(fd, error_reply(-E2BIG, "line longer than " + std::to_string(settings_.max_line) +
                                         " bytes (max_line)") +
                     "\n");
    return false;
  }
  return true;
}

std::string LineServer::handle(const std::string &line, bool *close) {
  Request r = parse_request(line);
  auto failed = [&](int rc, const std::string &what) {
    ++errors_;
    return error_reply(rc, what + ": " + strata_last_error());
  };
  switch (r.command) {
    case Command::kPut: {
      // A compound write, to learn the version the write made.
      strata_write_op_t op = strata_write_op_new();
      if (!op) return failed(-ENOMEM, "PUT " + r.name);
      strata_write_op_write_full(op, r.value.data(), r.value.size());
      uint64_t version = 0;
      int rc = strata_write_op_operate(op, io_, r.name.c_str(), &version);
      strata_write_op_release(op);
      if (rc < 0) return failed(rc, "PUT " + r.name);
      ++puts_;
      bytes_stored_ += r.value.size();
      return "OK " + std::to_string(version);
    }
    case Command::kGet: {
      strata_obj_stat st{};
      st.struct_size = sizeof st;
      if (int rc = strata_stat(io_, r.name.c_str(), &st); rc < 0)
        return failed(rc, "GET " + r.name);
      std::string value(st.size, '\0');
      int64_t n = strata_read(io_, r.name.c_str(), value.data(), value.size(), 0);
      if (n < 0) return failed(int(n), "GET " + r.name);
      value.resize(size_t(n));
      ++gets_;
      bytes_served_ += value.size();
      return value_reply(value);
    }
    case Command::kDel:
      if (int rc = strata_remove(io_, r.name.c_str()); rc < 0) return failed(rc, "DEL " + r.name);
      ++dels_;
      return "OK";
    case Command::kQuit:
      *close = true;
      return "BYE";
    default:
      ++errors_;
      return error_reply(-EINVAL, r.error);
  }
}

std::string LineServer::status_line() const {
  uint64_t open = connections_open_, requests = puts_ + gets_ + dels_;
  return "serving " + address_ + " for pool '" + settings_.pool + "': " + std::to_string(open) +
         (open == 1 ? " client, " : " clients, ") + std::to_string(requests) + " requests (" +
         std::to_string(errors_) + " errors)";
}

std::string LineServer::status_json() const {
  return "{\"address\":" + json_string(address_) + ",\"pool\":" + json_string(settings_.pool) +
         ",\"connections\":" + std::to_string(connections_open_) +
         ",\"requests\":{\"put\":" + std::to_string(puts_) + ",\"get\":" + std::to_string(gets_) +
         ",\"del\":" + std::to_string(dels_) + "},\"errors\":" + std::to_string(errors_) +
         ",\"bytes_stored\":" + std::to_string(bytes_stored_) +
         ",\"bytes_served\":" + std::to_string(bytes_served_) + "}";
}

std::string LineServer::metrics() const {
  std::string m;
  auto metric = [&](const char *name, const char *type, const char *help) {
    m += std::string("# HELP strata_lines_") + name + " " + help + "\n# TYPE strata_lines_" + name +
         " " + type + "\n";
  };
  auto sample = [&](const std::string &name, uint64_t value) {
    m += "strata_lines_" + name + " " + std::to_string(value) + "\n";
  };
  metric("requests_total", "counter", "Requests served successfully, by command.");
  sample("requests_total{command=\"put\"}", puts_);
  sample("requests_total{command=\"get\"}", gets_);
  sample("requests_total{command=\"del\"}", dels_);
  metric("errors_total", "counter", "Requests answered with ERR.");
  sample("errors_total", errors_);
  metric("connections_total", "counter", "Client connections accepted.");
  sample("connections_total", connections_total_);
  metric("connections", "gauge", "Client connections open now.");
  sample("connections", connections_open_);
  metric("stored_bytes_total", "counter", "Value bytes written to the cluster.");
  sample("stored_bytes_total", bytes_stored_);
  metric("served_bytes_total", "counter", "Value bytes read from the cluster and sent.");
  sample("served_bytes_total", bytes_served_);
  return m;
}

}  // namespace lines
