#include "nbd_test_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace rbdtest {

void be16(std::string &s, uint16_t v) {
  s.push_back(char(v >> 8));
  s.push_back(char(v));
}
void be32(std::string &s, uint32_t v) {
  be16(s, uint16_t(v >> 16));
  be16(s, uint16_t(v));
}
void be64(std::string &s, uint64_t v) {
  be32(s, uint32_t(v >> 32));
  be32(s, uint32_t(v));
}
uint16_t be16_at(const std::string &s, size_t pos) {
  if (pos + 2 > s.size()) throw std::runtime_error("short field");
  return uint16_t(uint8_t(s[pos]) << 8 | uint8_t(s[pos + 1]));
}
uint32_t be32_at(const std::string &s, size_t pos) {
  return uint32_t(be16_at(s, pos)) << 16 | be16_at(s, pos + 2);
}
uint64_t be64_at(const std::string &s, size_t pos) {
  return uint64_t(be32_at(s, pos)) << 32 | be32_at(s, pos + 4);
}

TestClient::TestClient(const std::string &unix_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, unix_path.c_str(), sizeof(sa.sun_path) - 1);
  if (::connect(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::runtime_error("connect " + unix_path + ": " + std::strerror(err));
  }
  timeval tv{10, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

TestClient::~TestClient() { close(); }

void TestClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TestClient::send_raw(const std::string &bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    }
    off += size_t(n);
  }
}

std::string TestClient::read_raw(size_t n) {
  std::string out(n, '\0');
  size_t off = 0;
  while (off < n) {
    ssize_t got = ::recv(fd_, out.data() + off, n - off, 0);
    if (got == 0) throw std::runtime_error("server closed the connection");
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
    }
    off += size_t(got);
  }
  return out;
}

bool TestClient::closed_by_server() {
  char c;
  for (;;) {
    ssize_t got = ::recv(fd_, &c, 1, 0);
    if (got == 0) return true;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == ECONNRESET) return true;
    return false;  // data, or the timeout
  }
}

uint16_t TestClient::read_greeting() {
  std::string g = read_raw(18);
  if (be64_at(g, 0) != 0x4e42444d41474943ull || be64_at(g, 8) != 0x49484156454f5054ull)
    throw std::runtime_error("bad greeting");
  return be16_at(g, 16);
}

void TestClient::send_client_flags(uint32_t flags) {
  std::string s;
  be32(s, flags);
  send_raw(s);
}

void TestClient::send_option(uint32_t option, const std::string &data, uint64_t magic) {
  std::string s;
  be64(s, magic);
  be32(s, option);
  be32(s, uint32_t(data.size()));
  send_raw(s + data);
}

OptionReply TestClient::read_option_reply() {
  std::string h = read_raw(20);
  if (be64_at(h, 0) != 0x0003e889045565a9ull) throw std::runtime_error("bad option reply magic");
  OptionReply r;
  r.option = be32_at(h, 8);
  r.type = be32_at(h, 12);
  r.data = read_raw(be32_at(h, 16));
  return r;
}

std::string TestClient::info_request(const std::string &name, const std::vector<uint16_t> &infos) {
  std::string s;
  be32(s, uint32_t(name.size()));
  s += name;
  be16(s, uint16_t(infos.size()));
  for (uint16_t i : infos) be16(s, i);
  return s;
}

std::string TestClient::meta_request(const std::string &name, const std::vector<std::string> &queries) {
  std::string s;
  be32(s, uint32_t(name.size()));
  s += name;
  be32(s, uint32_t(queries.size()));
  for (const auto &q : queries) {
    be32(s, uint32_t(q.size()));
    s += q;
  }
  return s;
}

ExportInfo TestClient::go(const std::string &name, bool structured, bool base_allocation) {
  read_greeting();
  send_client_flags(3);
  auto expect_ack = [this](uint32_t opt) {
    OptionReply r;
    do {
      r = read_option_reply();
    } while (r.type == 4);  // meta context replies before the ack
    if (r.option != opt || r.type != 1) throw std::runtime_error("option not acknowledged");
  };
  if (structured) {
    send_option(8, {});
    expect_ack(8);
  }
  if (base_allocation) {
    send_option(10, meta_request(name, {"base:allocation"}));
    expect_ack(10);
  }
  send_option(7, info_request(name, {}));
  ExportInfo info;
  for (;;) {
    OptionReply r = read_option_reply();
    if (r.type == 1) break;
    if (r.type != 3) throw std::runtime_error("GO refused: type " + std::to_string(r.type));
    if (be16_at(r.data, 0) == 0) {
      info.size = be64_at(r.data, 2);
      info.flags = be16_at(r.data, 10);
    }
  }
  return info;
}

void TestClient::send_request(uint16_t type, uint16_t flags, uint64_t cookie, uint64_t offset,
                              uint32_t length, const std::string &payload, uint32_t magic) {
  std::string s;
  be32(s, magic);
  be16(s, flags);
  be16(s, type);
  be64(s, cookie);
  be64(s, offset);
  be32(s, length);
  send_raw(s + payload);
}

SimpleReply TestClient::read_simple(uint32_t data_len) {
  std::string h = read_raw(16);
  if (be32_at(h, 0) != 0x67446698) throw std::runtime_error("bad simple reply magic");
  SimpleReply r;
  r.error = be32_at(h, 4);
  r.cookie = be64_at(h, 8);
  if (r.error == 0 && data_len) r.data = read_raw(data_len);
  return r;
}

Chunk TestClient::read_chunk() {
  std::string h = read_raw(20);
  if (be32_at(h, 0) != 0x668e33ef) throw std::runtime_error("bad structured reply magic");
  Chunk c;
  c.flags = be16_at(h, 4);
  c.type = be16_at(h, 6);
  c.cookie = be64_at(h, 8);
  c.payload = read_raw(be32_at(h, 16));
  return c;
}

std::vector<Chunk> TestClient::read_structured() {
  std::vector<Chunk> chunks;
  do {
    chunks.push_back(read_chunk());
  } while (!chunks.back().done());
  return chunks;
}

namespace {
std::atomic<int> g_server_count{0};  // only names socket files apart
}

TestServer::TestServer(std::shared_ptr<strata::rbd::BlockDevice> device, strata::rbd::NbdServerOptions opts) {
  path = "/tmp/rbd-nbd-test-" + std::to_string(::getpid()) + "-" + std::to_string(g_server_count++) + ".sock";
  opts.unix_path = path;
  std::vector<strata::rbd::NbdExport> exports;
  exports.push_back({"", "the default export", device});
  exports.push_back({"other", "the same device again", device});
  server = strata::rbd::NbdServer::start(std::move(exports), std::move(opts));
}

TestServer::~TestServer() {
  if (server) server->stop();
}

}  // namespace rbdtest
